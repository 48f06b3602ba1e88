"""The user's Ctrl-C told apart from a ``KeyboardInterrupt`` that an implementation's own code raised.

A port imported into the runner can ``raise KeyboardInterrupt`` (or ``SystemExit``) wherever the
runner calls it in its own thread: importing the port, making its adapter, preparing a case. The
user's Ctrl-C (and a SIGTERM that a command reads as one) raises the same exception there. While
:func:`watching_interrupts` is active, those signals mark the watch before their usual handler
runs, so a ``KeyboardInterrupt`` that escapes an unmarked watch was raised by code: the
implementation's, which costs its case (or its start), not the run. ``SystemExit`` is never the
user's: nothing in the runner raises it while a case or a start is under way.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class InterruptWatch:
    """Whether a signal arrived while the watch was on, and whether signals can be watched from here at all."""

    #: False outside the main thread, where no handler can be set: every interrupt then counts as the user's.
    reliable: bool = True
    seen: bool = False

    def users(self, error: BaseException) -> bool:
        """True when ``error`` is the user's interrupt: a ``KeyboardInterrupt`` once a signal came, or any where none can be watched.

        Anything else (``SystemExit``, a ``KeyboardInterrupt`` no signal made, ``GeneratorExit``, an
        exception) was raised by the code that ran.
        """
        return isinstance(error, KeyboardInterrupt) and (self.seen or not self.reliable)


@contextmanager
def watching_interrupts() -> Iterator[InterruptWatch]:
    """Within, SIGINT and a SIGTERM handled in Python mark the watch, then run their usual handler.

    The handlers in place before are put back on leaving. Outside the main thread nothing is
    installed and the watch is not :attr:`~InterruptWatch.reliable`.
    """
    if threading.current_thread() is not threading.main_thread():
        yield InterruptWatch(reliable=False)
        return
    watch = InterruptWatch()
    previous = {number: signal.getsignal(number) for number in _SIGNALS}
    for number, handler in previous.items():
        if callable(handler):  # SIG_DFL and SIG_IGN raise nothing in Python: nothing to tell apart
            signal.signal(number, _marking(watch, handler))
    try:
        yield watch
    finally:
        for number, handler in previous.items():
            if callable(handler):
                signal.signal(number, handler)


def _marking(watch: InterruptWatch, handler: Callable[[int, FrameType | None], Any]) -> Callable[[int, FrameType | None], Any]:
    def marked(number: int, frame: FrameType | None) -> Any:
        watch.seen = True
        return handler(number, frame)

    return marked
