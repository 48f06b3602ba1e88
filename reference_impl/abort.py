"""A minimal ``AbortController`` / ``AbortSignal`` pair, mirroring the web API.

The caller keeps the controller and hands ``controller.signal`` to ``stream()``;
the producer reads ``signal.aborted`` when it runs, not when ``stream()`` is called.
"""

from __future__ import annotations


class AbortSignal:
    """A read-only flag that turns true once its controller aborts."""

    def __init__(self) -> None:
        """Build a signal that is not aborted."""
        self._aborted = False

    @property
    def aborted(self) -> bool:
        """Whether ``abort()`` was called on the owning controller."""
        return self._aborted


class AbortController:
    """Owns one ``AbortSignal`` and is the only way to trip it."""

    def __init__(self) -> None:
        """Build a controller with a fresh, not yet aborted signal."""
        self.signal = AbortSignal()

    def abort(self) -> None:
        """Mark the signal aborted; calling it again changes nothing."""
        self.signal._aborted = True
