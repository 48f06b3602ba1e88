"""The batch's side of the workers' fork server: start a worker per job, learn when it ends.

One :class:`WorkerSpawner` per batch starts ``python -m conformance.farm.forkserver
--fork-server`` (see :mod:`conformance.farm.forkserver`) and asks it for a worker per
submission; :class:`Worker` then behaves like the ``subprocess.Popen`` of a worker started
on its own (``pid``, ``wait(timeout)``), so the supervisor treats both alike.

If the server dies (a submission without the sandbox can kill any process of the grader's
user), the workers it held die with it and are reported killed by SIGKILL, and the next
start brings up a new server. Starting is serialised; waiting is not.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from conformance.farm.forkserver import read_frame, write_frame
from conformance.farm.reaper import Reaper
from conformance.farm.worker import Job

#: How long a start may take: the server's start-up (imports) and one fork.
START_TIMEOUT_S = 60.0


class WorkerStartError(RuntimeError):
    """The fork server could not start a worker, even after a restart."""


class _Server:
    """One fork-server process, the reader of its replies, and the workers it started."""

    def __init__(self, env: Mapping[str, str], reaper: Reaper, exits: dict[int, int], changed: threading.Condition) -> None:
        self.started: queue.Queue[int | None] = queue.Queue()
        self.pids: set[int] = set()
        self._exits = exits
        self._changed = changed
        self._reaper = reaper
        with reaper.lock:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "conformance.farm.forkserver", "--fork-server", str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=dict(env),
                start_new_session=True,  # no terminal signal reaches it; the batch stops it
            )
            reaper.workers.add(self.process.pid)
        self._reader = threading.Thread(target=self._read_replies, name="fork-server-replies", daemon=True)
        self._reader.start()

    def _read_replies(self) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        try:
            while True:
                reply = read_frame(fd)
                if reply[0] == "started":
                    with self._changed:
                        self.pids.add(reply[1])
                    self.started.put(reply[1])
                else:
                    _, pid, status = reply
                    with self._changed:
                        self._exits[pid] = status
                        self.pids.discard(pid)
                        self._changed.notify_all()
        except (EOFError, OSError, pickle.UnpicklingError, ValueError, TypeError, IndexError):
            pass
        # The server is gone: its workers died with it (PR_SET_PDEATHSIG).
        with self._changed:
            for pid in self.pids:
                self._exits.setdefault(pid, -signal.SIGKILL)
            self.pids.clear()
            self._changed.notify_all()
        self.started.put(None)

    def alive(self) -> bool:
        return self.process.poll() is None and self._reader.is_alive()

    def request(self, job: bytes, log_path: Path) -> int | None:
        """The new worker's pid; None when the server is gone (or does not answer in time)."""
        assert self.process.stdin is not None
        try:
            write_frame(self.process.stdin.fileno(), (job, str(log_path)))
            return self.started.get(timeout=START_TIMEOUT_S)
        except (OSError, queue.Empty):
            return None

    def close(self) -> None:
        """End the server (its stdin closes; it kills what still runs) and reap it."""
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        # Its stdout is closed only once the reader saw the end: never under a blocked read.
        self._reader.join(timeout=5)
        if self.process.stdout is not None and not self._reader.is_alive():
            self.process.stdout.close()
        self._reaper.workers.discard(self.process.pid)


class Worker:
    """A forked worker, waited for like a ``subprocess.Popen``."""

    def __init__(self, pid: int, spawner: WorkerSpawner) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._spawner = spawner

    def wait(self, timeout: float | None = None) -> int:
        """The worker's exit status (negative: the signal that ended it); ``subprocess.TimeoutExpired`` if it runs on."""
        if self.returncode is None:
            self.returncode = self._spawner.wait_for(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(f"grading worker {self.pid}", timeout or 0.0)
        return self.returncode


class WorkerSpawner:
    """Starts grading workers through one fork server (started on first use; thread-safe)."""

    def __init__(self, env: Mapping[str, str], reaper: Reaper) -> None:
        self._env = env
        self._reaper = reaper
        self._lock = threading.Lock()
        self._changed = threading.Condition()
        self._exits: dict[int, int] = {}
        self._server: _Server | None = None
        self._closed = False

    def start(self, job: Job, log_path: Path) -> Worker:
        """Fork a worker for ``job``, its stdout and stderr going to ``log_path``."""
        data = pickle.dumps(job)
        with self._lock:
            for _ in range(2):  # a dead server is replaced once
                if self._closed:
                    raise WorkerStartError("the batch is closing")
                if self._server is None or not self._server.alive():
                    if self._server is not None:
                        self._server.close()
                    self._server = _Server(self._env, self._reaper, self._exits, self._changed)
                pid = self._server.request(data, log_path)
                if pid is not None:
                    return Worker(pid, self)
                self._server.close()
                self._server = None
        raise WorkerStartError("the grading workers' fork server did not start a worker")

    def wait_for(self, pid: int, timeout: float | None) -> int | None:
        """``pid``'s exit status once it ended (forgotten after); None if it runs past ``timeout``."""
        with self._changed:
            if not self._changed.wait_for(lambda: pid in self._exits, timeout):
                return None
            return self._exits.pop(pid)

    def close(self) -> None:
        """Stop the fork server; no worker starts after this."""
        with self._lock:
            self._closed = True
            if self._server is not None:
                self._server.close()
                self._server = None
