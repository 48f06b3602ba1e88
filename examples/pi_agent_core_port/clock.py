"""Clocks: ``Date.now()`` for timestamps, ``performance.now()`` for durations."""

from __future__ import annotations

import time


def now_ms() -> int:
    """Milliseconds since the epoch, as ``Date.now()``."""
    return time.time_ns() // 1_000_000


def elapsed_ms(started: float) -> int:
    """Whole milliseconds since ``started`` (a ``time.perf_counter()``), rounded as ``Math.round``."""
    return max(0, int((time.perf_counter() - started) * 1000 + 0.5))
