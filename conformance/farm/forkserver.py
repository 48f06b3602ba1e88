"""The grading workers' fork server: one process that has imported the grader, forking a worker per job.

Started by the batch (:mod:`conformance.farm.spawner`) as
``python -m conformance.farm.forkserver --fork-server``, in a session of its own. It imports
everything a worker needs (the grader, the adapters, jsonschema and the schemas) once, and
asks Node.js its version once; each job is then an ``os.fork()`` of this warm,
single-threaded process instead of a new interpreter that imports it all again (about
0.25 s of CPU per submission).

The protocol, on its stdin and stdout (the batch's pipes, never the submission's):

- in: frames ``(job bytes, log path)``: a pickled :class:`~conformance.farm.worker.Job`
  and the file that gets the worker's stdout and stderr;
- out: frames ``("started", pid)``, one per job in order, and ``("exited", pid, status)``
  when a worker ends (``status`` as ``subprocess`` gives it: negative for a signal).

A frame is a 4-byte big-endian length and a pickle. The server exits when its stdin ends,
and dies with the batch (``PR_SET_PDEATHSIG``). Each worker dies with the server, and
starts in a new session, as a worker started on its own does.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import select
import signal
import struct
import sys
from collections.abc import Iterator
from typing import Any

from conformance.adapters.kinds import PRELOAD_MODULES
from conformance.farm.worker import EXIT_GRADER_FAILED, die_with_parent, run_job

_HEADER = struct.Struct(">I")
#: What a worker imports while it grades, beyond the worker module; imported here once, before any fork.
#: The transports are each kind's own (:attr:`~conformance.adapters.kinds.base.ImplKind.preload`): a new kind needs no edit here.
PRELOAD = ("conformance.adapters.kinds", *PRELOAD_MODULES, "conformance.running.execution", "conformance.model.schemas")
#: Without pidfds (Linux before 5.3), how often ended workers are looked for.
_POLL_S = 0.05


def write_frame(fd: int, value: Any) -> None:
    """Write ``value`` as one frame (all of it, however the pipe splits it)."""
    data = pickle.dumps(value)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def read_frame(fd: int) -> Any:
    """The next frame's value; EOFError at the end of the stream (or in a torn frame)."""
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return pickle.loads(_read_exactly(fd, size))


def _read_exactly(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    left = size
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _preload() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    from conformance.adapters import pi_course
    from conformance.model import schemas

    schemas.validator("protocol.schema.json", "/$defs/Notice")  # loads every schema once
    with contextlib.suppress(pi_course.CourseLayoutError):
        pi_course.find_node()  # asked once here, not once per pi-course: or pi-ai: worker


def _kill_all(children: dict[int, int | None]) -> None:
    """SIGKILL every worker's group and reap them: the batch is gone or done."""
    for pid in children:
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(OSError):
                kill(pid, signal.SIGKILL)
    for pid, pidfd in children.items():
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        if pidfd is not None:
            os.close(pidfd)
    children.clear()


def _run_child(job_bytes: bytes, log_path: str, server_pid: int) -> None:
    """In the forked child: become a worker in a session of its own, grade the job, exit. Never returns."""
    code = 1
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the server's pipes and pidfds
        code = run_job(job_bytes, server_pid)
    except BaseException:
        with contextlib.suppress(Exception):
            import traceback

            traceback.print_exc()
        code = EXIT_GRADER_FAILED
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _ended(children: dict[int, int | None]) -> Iterator[tuple[int, int]]:
    """Every ended worker, ``(pid, status)`` as ``subprocess`` reports it, its group killed first.

    A worker is looked at before it is reaped (``WNOWAIT``): until then its pid, and so its
    process-group id, cannot be reused, and what it left running in its group is killed
    without any risk of reaching an unrelated group.
    """
    while children:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if info is None or info.si_pid == 0:
            return
        pid = info.si_pid
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        _, wait_status = os.waitpid(pid, 0)
        pidfd = children.pop(pid, None)
        if pidfd is not None:
            os.close(pidfd)
        yield pid, os.waitstatus_to_exitcode(wait_status)


def serve(parent_pid: int, requests: int = 0, replies: int = 1) -> int:
    """Serve jobs from fd ``requests`` until it ends; report on fd ``replies``.

    When the requests end (the batch is done, or gone), the workers still running are
    killed: the batch has either waited for each one already or stopped caring.
    """
    die_with_parent(parent_pid, adopt_orphans=False)
    _preload()
    server_pid = os.getpid()
    children: dict[int, int | None] = {}  # pid -> its pidfd (None: polled)
    try:
        while True:
            watched = [requests, *(fd for fd in children.values() if fd is not None)]
            polled = any(fd is None for fd in children.values())
            ready, _, _ = select.select(watched, [], [], _POLL_S if polled else None)
            if requests in ready:
                try:
                    job_bytes, log_path = read_frame(requests)
                except EOFError:
                    return 0
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _run_child(job_bytes, log_path, server_pid)
                pidfd: int | None = None
                with contextlib.suppress(OSError, AttributeError):
                    pidfd = os.pidfd_open(pid)
                children[pid] = pidfd
                write_frame(replies, ("started", pid))
            for pid, status in _ended(children):
                write_frame(replies, ("exited", pid, status))
    except BrokenPipeError:
        return 1  # the batch stopped reading: it is gone
    finally:
        _kill_all(children)


def main(argv: list[str]) -> int:
    """``--fork-server PARENT_PID``: serve jobs until the batch's requests end."""
    if len(argv) != 2 or argv[0] != "--fork-server" or not argv[1].isdigit():
        print("usage: python -m conformance.farm.forkserver --fork-server PARENT_PID", file=sys.stderr)
        return 2
    return serve(int(argv[1]))


if __name__ == "__main__":
    # Run the imported module's main, not this __main__ copy's, so that every worker forked from
    # here runs the one copy of this module and of conformance.farm.worker that the job's pickle names.
    from conformance.farm import forkserver

    raise SystemExit(forkserver.main(sys.argv[1:]))
