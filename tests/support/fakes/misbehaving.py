"""A protocol server that serves the reference, except where told to misbehave.

Usage: python tests/support/fakes/misbehaving.py MODE [MODE ...]
Modes (OP is an operation name, or * for every operation):
  crash-on:OP  hang-on:OP  spin-on:OP  alloc-on:OP  garbage-on:OP  wrong-seq-on:OP  bad-schema-on:OP  huge-on:OP
  not-implemented-on:OP  threw-on:OP  leak-on:OP (throws with every input seen so far)  banner  exit-immediately  hang-on-hello  slow-hello
  crash-loading-on:OP (says it loads fake-module.js, then exits; honours the handshake's failed_modules)
  bad-notice-on:OP (a notice without its module)
  chatty-stderr  protocol-2  labs:3.1,3.2
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from conformance.adapters.reference import create
from conformance.server import answer


def main() -> None:  # noqa: C901  # TODO(issue 25): split
    modes = sys.argv[1:]
    by_op: dict[str, set[str]] = {}
    flags = set()
    for mode in modes:
        name, _, value = mode.partition(":")
        if name.endswith("-on"):
            by_op.setdefault(name[: -len("-on")], set()).add(value)
        else:
            flags.add(name)
    labs = next((mode.partition(":")[2].split(",") for mode in modes if mode.startswith("labs:")), None)

    def wants(kind: str, op: str) -> bool:
        ops = by_op.get(kind, set())
        return op in ops or ("*" in ops and op not in {"hello", "stop"})

    out = sys.stdout
    if "exit-immediately" in flags:
        sys.stderr.write("fatal: cannot load the implementation\n")
        sys.exit(7)
    if "banner" in flags:
        out.write("Welcome to my implementation!\n")
        out.flush()
    adapter = create()
    failed_modules: dict[str, str] = {}
    seen: list[object] = []  # every request's input, for leak-on (held-out exfiltration)
    for line in sys.stdin:
        request = json.loads(line)
        op = request.get("op")
        seq = request.get("seq")
        seen.append(request.get("input"))
        if op == "hello":
            failed_modules = request.get("failed_modules", {})
        if wants("crash-loading", op):
            if "fake-module.js" in failed_modules:
                error = {"kind": "load_failed", "message": failed_modules["fake-module.js"]}
                out.write(json.dumps({"seq": seq, "ok": False, "error": error}) + "\n")
                out.flush()
                continue
            out.write(json.dumps({"notice": "loading", "module": "fake-module.js"}) + "\n")
            out.flush()
            sys.exit(3)
        if wants("bad-notice", op):
            out.write(json.dumps({"notice": "loading"}) + "\n")
            out.flush()
        if "chatty-stderr" in flags:
            sys.stderr.write("log line that nobody reads\n" * 40000)
            sys.stderr.flush()
        if op == "hello" and "hang-on-hello" in flags:
            time.sleep(3600)
        if op == "hello" and "slow-hello" in flags:
            time.sleep(1.0)
        if wants("crash", op):
            sys.stderr.write(f"TypeError: cannot read properties of undefined (reading 'content') while answering {op}\n")
            sys.stderr.flush()
            sys.exit(3)
        if wants("hang", op):
            time.sleep(3600)
        while wants("spin", op):  # burns CPU time, for the --cpu-limit drill
            pass
        if wants("alloc", op):  # asks for 2 GiB, for the --memory-limit drill
            hog = bytearray(2 * 1024 * 1024 * 1024)
            del hog
        if wants("garbage", op):
            out.write("this is not JSON at all\n")
        elif wants("wrong-seq", op):
            out.write(json.dumps({"seq": seq + 100, "ok": True, "observation": {}}) + "\n")
        elif wants("bad-schema", op):
            out.write(json.dumps({"seq": seq, "ok": True, "observations": {}}) + "\n")
        elif wants("huge", op):
            out.write(json.dumps({"seq": seq, "ok": True, "observation": {"value": "x" * (5 * 1024 * 1024)}}) + "\n")
        elif wants("not-implemented", op):
            out.write(
                json.dumps({"seq": seq, "ok": False, "error": {"kind": "not_implemented", "message": f"{op} is not written yet"}}) + "\n"
            )
        elif wants("leak", op):
            message = "seen: " + json.dumps(seen, ensure_ascii=False)
            out.write(json.dumps({"seq": seq, "ok": False, "error": {"kind": "threw", "message": message}}, ensure_ascii=False) + "\n")
        elif wants("threw", op):
            out.write(json.dumps({"seq": seq, "ok": False, "error": {"kind": "threw", "message": "TypeError: boom"}}) + "\n")
        else:
            response = answer(adapter, request)
            if op == "hello" and "protocol-2" in flags:
                response["protocol"] = 2
            if op == "hello" and labs is not None:
                response["labs"] = [*labs]
            out.write(json.dumps(response, ensure_ascii=False) + "\n")
        out.flush()
        if op == "stop":
            return


if __name__ == "__main__":
    main()
