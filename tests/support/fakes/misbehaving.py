"""A protocol server that serves the reference, except where told to misbehave.

Usage: python tests/support/fakes/misbehaving.py MODE [MODE ...]
Modes (OP is an operation name, or * for every operation):
  crash-on:OP  hang-on:OP  spin-on:OP  alloc-on:OP  garbage-on:OP  wrong-seq-on:OP  bad-schema-on:OP  huge-on:OP
  not-implemented-on:OP  threw-on:OP  leak-on:OP (throws with every input seen so far)  banner  exit-immediately  hang-on-hello  slow-hello
  crash-loading-on:OP (says it loads fake-module.js, then exits; honours the handshake's failed_modules)
  bad-notice-on:OP (a notice without its module)
  chatty-stderr  protocol-2  labs:3.1,3.2
  slow-preload:SECONDS (offers preload in its handshake, and sleeps that long before answering it: a slow import)
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from conformance.adapters.reference import create
from conformance.server import answer


@dataclass
class _Modes:
    """The modes on the command line: per-operation ones by kind, flags, and the labs to claim."""

    by_op: dict[str, set[str]] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    labs: list[str] | None = None
    #: slow-preload: how long "importing the implementation" takes, answered as the preload (None: no preload offered).
    preload_s: float | None = None

    @classmethod
    def parse(cls, modes: list[str]) -> _Modes:
        parsed = cls()
        for mode in modes:
            name, _, value = mode.partition(":")
            if name.endswith("-on"):
                parsed.by_op.setdefault(name[: -len("-on")], set()).add(value)
            else:
                parsed.flags.add(name)
        parsed.labs = next((mode.partition(":")[2].split(",") for mode in modes if mode.startswith("labs:")), None)
        parsed.preload_s = next((float(mode.partition(":")[2]) for mode in modes if mode.startswith("slow-preload:")), None)
        return parsed

    def wants(self, kind: str, op: Any) -> bool:
        """Whether to misbehave as ``kind`` on ``op`` (``*``: every operation but the handshake and ``stop``)."""
        ops = self.by_op.get(kind, set())
        return op in ops or ("*" in ops and op not in {"hello", "stop"})


@dataclass
class _Server:
    """The reference behind the protocol, and what the misbehaving needs to remember between requests."""

    modes: _Modes
    adapter: Any
    out: TextIO
    failed_modules: dict[str, str] = field(default_factory=dict)
    seen: list[object] = field(default_factory=list)  # every request's input, for leak-on (held-out exfiltration)

    def serve(self, request: dict[str, Any]) -> bool:
        """Answer one request (or misbehave); False once ``stop`` is answered."""
        op = request.get("op")
        self.seen.append(request.get("input"))
        if op == "hello":
            self.failed_modules = request.get("failed_modules", {})
        if self.modes.wants("crash-loading", op):
            self._crash_loading(request.get("seq"))
            return True
        if op == "preload" and self.modes.preload_s is not None:
            time.sleep(self.modes.preload_s)  # the import, before the line that says it is done
            self.out.write(json.dumps({"seq": request.get("seq"), "ok": True}) + "\n")
            self.out.flush()
            return True
        self._noise(op)
        self._stall_or_crash(op)
        self.out.write(self._response(request) + "\n")
        self.out.flush()
        return op != "stop"

    def _crash_loading(self, seq: Any) -> None:
        """Say it loads fake-module.js and exit; once the handshake says that module failed, answer load_failed."""
        if "fake-module.js" in self.failed_modules:
            error = {"kind": "load_failed", "message": self.failed_modules["fake-module.js"]}
            self.out.write(json.dumps({"seq": seq, "ok": False, "error": error}) + "\n")
            self.out.flush()
            return
        self.out.write(json.dumps({"notice": "loading", "module": "fake-module.js"}) + "\n")
        self.out.flush()
        sys.exit(3)

    def _noise(self, op: Any) -> None:
        """A notice without its module on stdout, or a flood of stderr, before the answer."""
        if self.modes.wants("bad-notice", op):
            self.out.write(json.dumps({"notice": "loading"}) + "\n")
            self.out.flush()
        if "chatty-stderr" in self.modes.flags:
            sys.stderr.write("log line that nobody reads\n" * 40000)
            sys.stderr.flush()

    def _stall_or_crash(self, op: Any) -> None:
        """Wait, exit, spin or allocate instead of answering, as the modes ask."""
        if op == "hello" and "hang-on-hello" in self.modes.flags:
            time.sleep(3600)
        if op == "hello" and "slow-hello" in self.modes.flags:
            time.sleep(1.0)
        if self.modes.wants("crash", op):
            sys.stderr.write(f"TypeError: cannot read properties of undefined (reading 'content') while answering {op}\n")
            sys.stderr.flush()
            sys.exit(3)
        if self.modes.wants("hang", op):
            time.sleep(3600)
        while self.modes.wants("spin", op):  # burns CPU time, for the --cpu-limit drill
            pass
        if self.modes.wants("alloc", op):  # asks for 2 GiB, for the --memory-limit drill
            hog = bytearray(2 * 1024 * 1024 * 1024)
            del hog

    def _response(self, request: dict[str, Any]) -> str:
        """The response line (without its newline): a broken one as the modes ask, else the reference's."""
        op = request.get("op")
        seq: Any = request.get("seq")  # a number, as the harness sends it (wrong-seq-on adds to it)
        wants = self.modes.wants
        if wants("garbage", op):
            return "this is not JSON at all"
        if wants("wrong-seq", op):
            return json.dumps({"seq": seq + 100, "ok": True, "observation": {}})
        if wants("bad-schema", op):
            return json.dumps({"seq": seq, "ok": True, "observations": {}})
        if wants("huge", op):
            return json.dumps({"seq": seq, "ok": True, "observation": {"value": "x" * (5 * 1024 * 1024)}})
        if wants("not-implemented", op):
            return json.dumps({"seq": seq, "ok": False, "error": {"kind": "not_implemented", "message": f"{op} is not written yet"}})
        if wants("leak", op):
            message = "seen: " + json.dumps(self.seen, ensure_ascii=False)
            return json.dumps({"seq": seq, "ok": False, "error": {"kind": "threw", "message": message}}, ensure_ascii=False)
        if wants("threw", op):
            return json.dumps({"seq": seq, "ok": False, "error": {"kind": "threw", "message": "TypeError: boom"}})
        return self._correct(request)

    def _correct(self, request: dict[str, Any]) -> str:
        """The reference's answer, with the handshake changed as the flags ask."""
        response = answer(self.adapter, request)
        if request.get("op") == "hello" and "protocol-2" in self.modes.flags:
            response["protocol"] = 2
        if request.get("op") == "hello" and self.modes.labs is not None:
            response["labs"] = [*self.modes.labs]
        if request.get("op") == "hello" and self.modes.preload_s is not None:
            response["preload"] = True
        return json.dumps(response, ensure_ascii=False)


def main() -> None:
    modes = _Modes.parse(sys.argv[1:])
    out = sys.stdout
    if "exit-immediately" in modes.flags:
        sys.stderr.write("fatal: cannot load the implementation\n")
        sys.exit(7)
    if "banner" in modes.flags:
        out.write("Welcome to my implementation!\n")
        out.flush()
    server = _Server(modes, create(), out)
    for line in sys.stdin:
        if not server.serve(json.loads(line)):
            return


if __name__ == "__main__":
    main()
