"""A server that forks one ``pi-conformance`` process per request, with the heavy imports already done.

Started by :mod:`tests.support.cli_runner` as ``python -m tests.support.cli_zygote``. Each request is a JSON line
on stdin (``args``, ``env``, ``cwd``, ``stdout``, ``stderr``, ``timeout``); the server forks, the
child becomes ``python -m conformance.cli ARGS`` (environment, working folder, ``PYTHONPATH``,
output files) and the server answers with a JSON line: ``{"returncode": N}`` (minus the signal
number when a signal ended it, as :mod:`subprocess` reports it) or ``{"timed_out": true}`` once
it has killed a child that overran. End of input ends the server.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import sys
import time
from typing import Any

# What every command imports before its own work; what a command needs beyond these loads in the child.
PRELOAD = (
    "conformance.cli",
    "conformance.commands.run",
    "conformance.commands.grade",
    "conformance.commands.fixtures",
    # fuzz: Hypothesis takes 0.3 s to import, and the tests fuzz ten JS variants.
    "conformance.commands.fuzz",
    "conformance.fuzz.engine",
    "conformance.commands.pytest_plugin",
    "conformance.model.schemas",
    "conformance.loading.loader",
    "jsonschema",
    "yaml",
    "pytest",
    "pytest_cases",
)


def serve() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    # Replies go to stdout, flushed each time: a child's copy of the buffer is always empty, and
    # the child points its own file descriptor 1 elsewhere at once.
    for line in sys.stdin:
        print(json.dumps(_run(json.loads(line))), flush=True)


def _run(request: dict[str, Any]) -> dict[str, Any]:
    if request["args"][:1] == ["private-set"]:
        _share_probe_draws(request["env"])
    pid = os.fork()
    if pid == 0:
        _become_command(request)  # never returns
    deadline = time.monotonic() + float(request["timeout"])
    status = _wait(pid, deadline)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return {"timed_out": True}
    return {"returncode": os.waitstatus_to_exitcode(status)}


def _share_probe_draws(env: dict[str, str]) -> None:
    """Before forking a ``private-set``: its probe draws read once into this server, from the tests' cache.

    Each command is a fresh child: without this, every one drew the probes again (12 s of CPU each).
    """
    from pathlib import Path

    from tests.support.probe_cache import share_probe_draws

    folder = env.get("PI_CONFORMANCE_CACHE", "")
    if folder and folder != "off":
        share_probe_draws(Path(folder))


def _wait(pid: int, deadline: float) -> int | None:
    """The child's wait status, or None at the deadline."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if select.select([pidfd], [], [], left)[0]:
                return os.waitpid(pid, 0)[1]
    finally:
        os.close(pidfd)


def _become_command(request: dict[str, Any]) -> None:
    """In the forked child: run ``python -m conformance.cli ARGS`` as started with the request's environment, then exit."""
    code = 1
    try:
        env: dict[str, str] = request["env"]
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        # PYTHONPATH as the interpreter reads it: right after the script's own folder.
        extra = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry and entry not in sys.path]
        sys.path[1:1] = extra
        for fd, path in ((0, os.devnull), (1, request["stdout"]), (2, request["stderr"])):
            target = os.open(path, os.O_RDONLY if fd == 0 else os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        sys.argv = [os.path.join(request["cwd"], "conformance", "cli.py"), *request["args"]]
        from conformance.cli import main

        code = main(request["args"])
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except BaseException:  # as the interpreter does: the traceback on stderr, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        _shut_down()
        os._exit(code)


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    print(value, file=sys.stderr)
    return 1


def _shut_down() -> None:
    """What interpreter shutdown does before the process ends: join threads, run atexit, flush."""
    import atexit
    import threading

    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


if __name__ == "__main__":
    serve()
