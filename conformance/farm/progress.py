"""Progress of a batch on stderr: submissions done, running and failed.

On a terminal a status line is redrawn in place under one permanent line per finished
submission; elsewhere (CI logs, files) only the plain per-submission lines are written,
each with the counts, so a log shows progress without control characters.
"""

from __future__ import annotations

import threading
import time
from typing import TextIO

from conformance.common.student_text import one_line
from conformance.grading.grader import SubmissionResult

_CLEAR_LINE = "\r\x1b[K"


class Progress:
    """Thread-safe counters and their display."""

    def __init__(self, total: int, stream: TextIO | None, tty: bool | None = None) -> None:
        self.total = total
        self.stream = stream
        self.tty = bool(stream is not None and (tty if tty is not None else stream.isatty()))
        self.running: set[str] = set()
        self.done = 0
        self.failed = 0
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        if self.tty:
            # Redraw every second, so the clock moves while a slow submission holds the line.
            threading.Thread(target=self._tick, name="grade-progress", daemon=True).start()

    def counts(self) -> str:
        """``3/20 done, 2 running, 1 failed``."""
        return f"{self.done}/{self.total} done, {len(self.running)} running, {self.failed} failed"

    def started(self, name: str) -> None:
        """A submission starts grading."""
        with self._lock:
            self.running.add(name)
            self._redraw()

    def finished(self, result: SubmissionResult) -> None:
        """A submission is graded (whatever its status)."""
        with self._lock:
            self.running.discard(result.name)
            self.done += 1
            self.failed += result.status != "ok"
            # Names and details are student text: one line each, no escape sequence of theirs printed.
            status = result.status + (f" ({one_line(result.detail)})" if result.detail and result.status != "ok" else "")
            earned = f"{result.score.points:.2f}/{result.score.max_points:.2f}"
            line = f"[{self.counts()}] {one_line(result.name)}: {earned} {status} in {result.duration_s:.1f} s"
            self._write((_CLEAR_LINE if self.tty else "") + line + "\n")
            self._redraw()

    def close(self) -> None:
        """Clear the status line."""
        self._closed.set()
        with self._lock:
            if self.tty:
                self._write(_CLEAR_LINE)

    def _tick(self) -> None:
        while not self._closed.wait(1.0):
            with self._lock:
                if not self._closed.is_set():
                    self._redraw()

    def _redraw(self) -> None:
        if not self.tty:
            return
        elapsed = int(time.monotonic() - self._started)
        running = ", ".join(one_line(name) for name in sorted(self.running)[:3]) + (", …" if len(self.running) > 3 else "")
        line = f"grading: {self.counts()}  {elapsed // 60}:{elapsed % 60:02d}" + (f"  [{running}]" if running else "")
        self._write(_CLEAR_LINE + line)

    def _write(self, text: str) -> None:
        if self.stream is not None:
            self.stream.write(text)
            self.stream.flush()
