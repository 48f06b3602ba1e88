"""Running ``pi-conformance`` in a process of its own, as a user would: one helper for every test that does.

Each call is a new process, forked by :mod:`tests.support.cli_zygote`, a server that has already imported
the command line and its heavy dependencies (pytest, jsonschema, yaml). The command still starts
from a clean slate, with the test's arguments, environment, working folder and ``PYTHONPATH``; what
it skips is interpreter start-up and about 0.2 s of imports, paid once per test worker instead of
once per command (about 130 of them per test run). Tests about the process itself (signals,
process groups, killing ancestors) start the CLI with :mod:`subprocess` directly.
"""

from __future__ import annotations

import atexit
import json
import locale
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from tests.support.paths import REPO

# A reply comes this long after the command's own timeout, or the server is taken for dead.
_REPLY_GRACE_S = 30
_idle: list[subprocess.Popen[str]] = []  # servers not serving a call; one per concurrent caller
_idle_lock = threading.Lock()


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI subprocess: the repository importable, no job-array variables."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PI_SHARD", "JOB_COMPLETION", "SLURM_"))}
    return {**env, "PYTHONPATH": str(REPO), **(extra or {})}


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``pi-conformance ARGS`` from the repository root; ``env`` adds to (or replaces) :func:`cli_env`'s variables.

    Like ``subprocess.run(..., capture_output=True, text=True, timeout=timeout)``: the
    same result object, and ``subprocess.TimeoutExpired`` once the command is killed.
    """
    command = ["pi-conformance", *args]
    server = _take_server()
    with tempfile.TemporaryDirectory(prefix="pi-cli-") as folder:
        stdout, stderr = Path(folder, "stdout"), Path(folder, "stderr")
        request = {"args": list(args), "env": cli_env(env), "cwd": str(REPO), "stdout": str(stdout), "stderr": str(stderr)}
        reply = _ask(server, {**request, "timeout": timeout}, timeout + _REPLY_GRACE_S)
        if reply.get("timed_out"):
            raise subprocess.TimeoutExpired(command, timeout, _text(stdout), _text(stderr))
        returncode = reply["returncode"]
        assert isinstance(returncode, int), reply
        return subprocess.CompletedProcess(command, returncode, _text(stdout), _text(stderr))


def _take_server() -> subprocess.Popen[str]:
    # A server can die between calls: a test of the batch's reaper kills the stray children of
    # the test process, and this server is one. A dead one is dropped and a new one started.
    with _idle_lock:
        while _idle:
            server = _idle.pop()
            if server.poll() is None:
                return server
    command = [sys.executable, "-m", "tests.support.cli_zygote"]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO, env=cli_env(), text=True, encoding="utf-8")


def _ask(server: subprocess.Popen[str], request: dict[str, object], wait_s: float) -> dict[str, object]:
    assert server.stdin is not None and server.stdout is not None
    answer: list[str] = []
    try:
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        reader = threading.Thread(target=lambda: answer.append(server.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(wait_s)
    except OSError:
        pass
    if not answer or not answer[0]:
        server.kill()
        server.wait()
        raise RuntimeError(f"the CLI server died or stopped answering while running: pi-conformance {' '.join(request['args'])}")  # type: ignore[arg-type]
    with _idle_lock:
        _idle.append(server)
    reply: dict[str, object] = json.loads(answer[0])
    return reply


@atexit.register
def _stop_servers() -> None:
    # End of input ends a server; waiting here keeps its exit inside the test run.
    with _idle_lock:
        for server in _idle:
            if server.stdin is not None:
                server.stdin.close()
            server.wait(5)
        _idle.clear()


def _text(path: Path) -> str:
    # As subprocess's text mode reads it: the locale's encoding, universal newlines.
    data = path.read_bytes() if path.exists() else b""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")
