"""Serve any in-process implementation over the JSON-lines protocol (spec/protocol.md).

``python -m conformance.server --impl reference`` makes the bundled reference a program
that ``--impl cmd:...`` can check, so CI runs the whole suite through the protocol too.
It also shows porters what the program side of the protocol does.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from conformance import __version__
from conformance.adapters.binding import BindingAdapter
from conformance.adapters.interface import Adapter, HarnessError, ImplementationThrew, OperationNotSupported
from conformance.adapters.kinds import KINDS, default_impl, parse_impl
from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.model.profiles import ALL_OPERATIONS, DEFAULT_PROFILE, PROFILES

PROTOCOL_VERSION = 1


def answer(adapter: Adapter, request: JsonObject) -> JsonObject:
    """The response to one request."""
    seq = request.get("seq")
    op = request.get("op")
    if op == "hello":
        settle = request.get("settle_deadline_s")
        if isinstance(adapter, BindingAdapter) and isinstance(settle, int | float):
            adapter.settle_deadline_s = float(settle)
        implementation: JsonObject = {"name": adapter.name, "version": adapter.version or __version__, "language": "python"}
        profile = PROFILES.get(adapter.profile or DEFAULT_PROFILE, PROFILES[DEFAULT_PROFILE])
        operations: list[JsonValue] = [*sorted(profile.operations)]
        hello: JsonObject = {"seq": seq, "ok": True, "protocol": PROTOCOL_VERSION, "implementation": implementation}
        hello["operations"] = operations
        if adapter.profile is not None:  # a pi-ai-1 binding says so: run against the course, it is told plainly
            hello["profile"] = adapter.profile
        if adapter.unclaimed_features:
            hello["unclaimed_features"] = list(adapter.unclaimed_features)
        return hello
    if op == "stop":
        return {"seq": seq, "ok": True}
    if op not in ALL_OPERATIONS or not isinstance(request.get("input"), dict):
        return {"seq": seq, "ok": False, "error": {"kind": "protocol", "message": f"unknown operation or missing input: {op!r}"}}
    steps = request.get("steps")
    return _perform(adapter, seq, str(op), request["input"], steps if isinstance(steps, list) else [])  # type: ignore[arg-type]


def _perform(adapter: Adapter, seq: JsonValue, op: str, input: JsonObject, steps: list[JsonObject]) -> JsonObject:
    """The response to one operation: its observation, or why there is none."""
    try:
        observation = adapter.perform(op, input, steps)
    except OperationNotSupported as error:
        return {"seq": seq, "ok": False, "error": {"kind": "not_implemented", "message": str(error)}}
    except ImplementationThrew as error:
        return {"seq": seq, "ok": False, "error": {"kind": "threw", "message": str(error)}}
    except (HarnessError, Exception) as error:
        return {"seq": seq, "ok": False, "error": {"kind": "protocol", "message": f"{type(error).__name__}: {error}"}}
    except BaseException as error:  # SystemExit, KeyboardInterrupt from the port's code: its case errors, the server goes on
        message = f"the implementation raised {type(error).__name__}: {error}"
        return {"seq": seq, "ok": False, "error": {"kind": "protocol", "message": message}}
    return {"seq": seq, "ok": True, "observation": observation}


def serve(adapter: Adapter, source: TextIO, sink: TextIO) -> None:
    """Answer requests from ``source`` on ``sink`` until ``stop`` or end of input."""
    for line in source:
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            problem = f"not a JSON object: {line[:200]!r}"
            response: JsonObject = {"seq": None, "ok": False, "error": {"kind": "protocol", "message": problem}}
        else:
            response = answer(adapter, request)
        sink.write(json.dumps(response, ensure_ascii=False) + "\n")
        sink.flush()
        if isinstance(request, dict) and request.get("op") == "stop":
            return


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``python -m conformance.server --impl reference``."""
    parser = argparse.ArgumentParser(prog="python -m conformance.server", description=__doc__.splitlines()[0] if __doc__ else None)
    in_process = [kind.usage for kind in KINDS if not kind.separate_process]
    parser.add_argument(
        "--impl",
        type=parse_impl,
        default=default_impl(DEFAULT_PROFILE),
        help=f"the in-process implementation to serve ({', '.join(in_process)})",
    )
    parser.add_argument(
        "--without-feature", action="append", default=[], metavar="NAME", help="state this feature as unclaimed in the handshake"
    )
    args = parser.parse_args(argv)
    adapter = args.impl.adapter()
    if args.without_feature:
        adapter.unclaimed_features = tuple(args.without_feature)
    # Anything the implementation prints must not corrupt the protocol stream.
    protocol_out, sys.stdout = sys.stdout, sys.stderr
    try:
        serve(adapter, sys.stdin, protocol_out)
    finally:
        adapter.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
