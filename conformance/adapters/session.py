"""One running program under its supervisor: start, line I/O that never blocks, and a bounded stop.

:class:`Session` is what :class:`~conformance.adapters.process.ProcessAdapter` talks through; the
program starts and stops as every confined program does (:mod:`conformance.isolation.confine`).
"""

from __future__ import annotations

import collections
import json
import os
import queue
import secrets
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Literal

from conformance.adapters.process_options import ProcessOptions
from conformance.adapters.protocol import QUOTE_CHARS
from conformance.common.jsontypes import JsonObject
from conformance.isolation.confine import SESSION_MARKER, minimal_environment, stop_tree, supervisor_argv
from conformance.isolation.sandbox import SANDBOX_HOME, bwrap_command, find_bwrap, runtime_path

#: What the stdout reader delivers: a line, the end of the output, or the start of a line over the limit.
LineKind = Literal["line", "eof", "oversize"]
_STDERR_TAIL_BYTES = 4096
#: How long an exited program's stderr may take to reach its end (a stray holding it open is killed by then).
_STDERR_DRAIN_S = 1.0


_POLL_S = 0.1
_WRITE_TIMEOUT_S = 10.0


class Session:
    """One running program under its supervisor, with threads that drain its stdout and stderr.

    Never blocks on a pipe: reads and writes go through ``select`` on raw file descriptors
    with short polls, so a stray child that keeps a pipe open (``sh -c 'sleep 900 & exec
    server'``, ``spawn(..., {stdio: "inherit"})``) cannot stall the grader, and each reader
    thread closes its own descriptor (no file is closed under a thread that is using it).
    """

    def __init__(self, options: ProcessOptions) -> None:
        self.options = options
        self.lines: queue.Queue[tuple[LineKind, bytes]] = queue.Queue()
        self.stderr_tail: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._stderr_lock = threading.Lock()
        self._closing = threading.Event()
        self._stderr_done = threading.Event()
        self._stdin_lock = threading.Lock()
        self.marker = secrets.token_hex(16)
        #: The module the program said it is loading for the request in flight (a ``loading``
        #: notice not yet followed by ``loaded``): a death now is that module's, not the case's.
        self.loading: str | None = None
        #: The key of this process's sealed lines, sent in the handshake; verification starts when the
        #: handshake's response says ``sealed``.
        self.channel_key = secrets.token_bytes(32)
        self.sealed = False
        env = program_environment(options, self.marker)
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        stderr_read, stderr_write = os.pipe()
        try:
            self.process = subprocess.Popen(
                supervised_argv(options),
                stdin=stdin_read,
                stdout=stdout_write,
                stderr=stderr_write,
                cwd=options.cwd,
                env=env,
                start_new_session=True,  # its own process group and session, apart from the grader's terminal
            )
        except OSError:
            for fd in (stdin_read, stdin_write, stdout_read, stdout_write, stderr_read, stderr_write):
                os.close(fd)
            raise
        for fd in (stdin_read, stdout_write, stderr_write):
            os.close(fd)
        self._stdin: int | None = stdin_write
        os.set_blocking(stdin_write, False)
        threading.Thread(target=self._read_stdout, args=(stdout_read,), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(stderr_read,), daemon=True).start()

    def _chunks(self, fd: int) -> Iterator[bytes]:
        """What arrives on ``fd`` until its end of file or :meth:`kill`; closes ``fd`` at the end."""
        try:
            while not self._closing.is_set():
                ready, _, _ = select.select([fd], [], [], _POLL_S)
                if not ready:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    return
                yield chunk
        except OSError:
            return
        finally:
            os.close(fd)

    def _read_stdout(self, fd: int) -> None:
        limit = self.options.max_line_bytes
        buffer = bytearray()
        for chunk in self._chunks(fd):
            buffer += chunk
            while (end := buffer.find(b"\n")) >= 0:
                line = bytes(buffer[: end + 1])
                del buffer[: end + 1]
                if len(line) > limit + 1:
                    self.lines.put(("oversize", line[:QUOTE_CHARS]))
                    return
                self.lines.put(("line", line))
            if len(buffer) > limit:
                self.lines.put(("oversize", bytes(buffer[:QUOTE_CHARS])))
                return
        self.lines.put(("eof", b""))

    def _read_stderr(self, fd: int) -> None:
        # Drained continuously, so a chatty program never blocks on a full pipe.
        try:
            for chunk in self._chunks(fd):
                with self._stderr_lock:
                    self.stderr_tail.append(chunk)
                    self._stderr_size += len(chunk)
                    while self._stderr_size > _STDERR_TAIL_BYTES and len(self.stderr_tail) > 1:
                        self._stderr_size -= len(self.stderr_tail.popleft())
        finally:
            self._stderr_done.set()

    def stderr_text(self) -> str:
        """The end of what the program wrote on stderr.

        Once it has exited, its last words (the supervisor's "the memory limit ... was reached")
        may still be in the pipe: they are waited for, briefly.
        """
        if self.process.poll() is not None:
            self._stderr_done.wait(_STDERR_DRAIN_S)
        with self._stderr_lock:
            text = b"".join(self.stderr_tail).decode("utf-8", errors="replace")
        return text[-_STDERR_TAIL_BYTES:].strip()

    def send(self, message: JsonObject) -> None:
        """Write one line; ``OSError`` if the program is gone or does not read it in time."""
        # U+2028 and U+2029 escaped: valid raw in JSON, but some line readers (bun's readline) end a line there.
        text = json.dumps(message, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
        data = (text + "\n").encode("utf-8")
        deadline = time.monotonic() + _WRITE_TIMEOUT_S
        while data:
            with self._stdin_lock:
                fd = self._stdin
                if fd is None or self._closing.is_set():
                    raise BrokenPipeError("the program was stopped")
                _, ready, _ = select.select([], [fd], [], _POLL_S)
                if ready:
                    try:
                        data = data[os.write(fd, data) :]
                    except BlockingIOError:
                        pass
            if data and time.monotonic() > deadline:
                raise TimeoutError(f"the program did not read its stdin within {_WRITE_TIMEOUT_S:g} s")

    def receive(self, timeout_s: float) -> tuple[LineKind, bytes]:
        try:
            return self.lines.get(timeout=timeout_s)
        except queue.Empty:
            return ("eof", b"") if self.process.poll() is not None else ("line", b"")

    def alive(self) -> bool:
        return self.process.poll() is None and not self._closing.is_set()

    def exit_description(self) -> str:
        try:
            code = self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if self.options.sandbox is not None and 128 < code < 128 + signal.NSIG:
            code = 128 - code  # bwrap reports a death by signal N as status 128 + N
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with status {code}"

    def kill(self) -> None:
        """End the program and every process it started; returns within a few seconds whatever they do."""
        self._closing.set()
        self.lines.put(("eof", b""))  # wakes a request waiting for an answer that will never come
        stop_tree(self.process, self.marker)
        with self._stdin_lock:
            if self._stdin is not None:
                os.close(self._stdin)
                self._stdin = None


def program_environment(options: ProcessOptions, marker: str) -> dict[str, str]:
    """The program's environment: minimal, its ``--env`` additions, the session marker; inside
    the sandbox its home and temporary folder are the private ``/tmp``."""
    env = minimal_environment(options.env)
    if options.sandbox is not None:
        inside = {"HOME": SANDBOX_HOME, "TMPDIR": SANDBOX_HOME, "PATH": runtime_path(options.argv[:1])}
        env.update({key: value for key, value in inside.items() if key not in options.env})
    env[SESSION_MARKER] = marker
    return env


def supervised_argv(options: ProcessOptions) -> list[str]:
    """The command line: the supervisor (subreaper, limits), then the program itself."""
    limits = options.effective_limits
    program = options.argv
    if options.sandbox is not None:
        program = bwrap_command(options.sandbox, program, find_bwrap() or "bwrap", limits.tmp_mb)
    return supervisor_argv(program, limits, options.run_as)
