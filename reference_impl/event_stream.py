"""The chapter 02 event stream, and the chapter 03 stream of model events.

A producer ``push``es events and ``end``s the stream; one consumer iterates it with
``async for``; ``result()`` gives the final value extracted from the terminal event.

Implementation-defined points (spec section 5), and the choices made here:

* ``push`` after the first terminal event, or after ``end()``: silently ignored.
* ``end(result)`` with no terminal event: ``result()`` resolves with ``result``.
  ``end()`` with no argument and no terminal event: ``result()`` stays pending, as
  in the course (there is nothing to resolve it with).
* Several consumers share one buffer: each event goes to exactly one of them.

``result()`` needs a running event loop. The stream itself does not: it records the
outcome in plain attributes and creates its ``asyncio.Future`` lazily, on the loop
that is running when ``result()`` is first called, so a stream built and settled
anywhere works.
"""

from __future__ import annotations

import asyncio
import enum
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Generic, Literal, TypeVar

from .ir import AssistantMessage, ModelEvent

T = TypeVar("T")
R = TypeVar("R")


class _Missing(enum.Enum):
    """Sentinel type: ``end()`` was called without an argument."""

    MISSING = enum.auto()


_MISSING: Literal[_Missing.MISSING] = _Missing.MISSING


class EventStream(Generic[T, R]):
    """A buffered, single-consumer stream of events ending in a result."""

    def __init__(
        self,
        is_terminal: Callable[[T], bool],
        extract_result: Callable[[T], R],
    ) -> None:
        """Build a stream that ends at the first event ``is_terminal`` accepts."""
        self._is_terminal = is_terminal
        self._extract_result = extract_result
        self._buffer: deque[T] = deque()
        self._closed = False  # a terminal event was pushed or end() was called
        self._waiters: list[asyncio.Future[None]] = []
        # A 1-tuple once settled, so that a result of None is still a result.
        self._outcome: tuple[R] | None = None
        self._future: asyncio.Future[R] | None = None

    def push(self, event: T) -> None:
        """Deliver ``event``; the first terminal event also settles ``result()``.

        Ignored once the stream is closed (STREAM-4).
        """
        if self._closed:
            return
        self._buffer.append(event)
        if self._is_terminal(event):
            self._closed = True
            self._settle(self._extract_result(event))
        self._wake_consumers()

    def end(self, result: R | Literal[_Missing.MISSING] = _MISSING) -> None:
        """Close the stream; a waiting consumer finishes after the buffered events.

        Never throws and may be called any number of times (STREAM-5). With an
        argument, and only if nothing settled ``result()`` yet, resolve it with that.
        """
        self._closed = True
        if not isinstance(result, _Missing):
            self._settle(result)
        self._wake_consumers()

    def result(self) -> asyncio.Future[R]:
        """Return a future of the stream's result (call it inside a running loop).

        The future is shielded, so a caller that cancels its wait (for example with
        ``asyncio.wait_for``) does not cancel the result for anybody else.
        """
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
            if self._outcome is not None:
                self._future.set_result(self._outcome[0])
        return asyncio.shield(self._future)

    async def __aiter__(self) -> AsyncIterator[T]:
        """Yield every event in push order, then stop once the stream is closed."""
        while True:
            if self._buffer:
                yield self._buffer.popleft()
            elif self._closed:
                return
            else:
                waiter = asyncio.get_running_loop().create_future()
                self._waiters.append(waiter)
                await waiter

    def _settle(self, value: R) -> None:
        # Only the first settlement counts (STREAM-4, STREAM-5).
        if self._outcome is not None:
            return
        self._outcome = (value,)
        if self._future is not None and not self._future.done():
            self._future.set_result(value)

    def _wake_consumers(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            # A consumer that was cancelled while waiting leaves a done future.
            if not waiter.done():
                waiter.set_result(None)


def _is_terminal_model_event(event: ModelEvent) -> bool:
    return event["type"] == "done" or event["type"] == "error"


def _model_event_result(event: ModelEvent) -> AssistantMessage:
    if event["type"] == "done":
        return event["message"]
    if event["type"] == "error":
        return event["error"]
    raise ValueError(f"non-terminal event {event['type']!r} has no final message")


class AssistantMessageEventStream(EventStream[ModelEvent, AssistantMessage]):
    """A stream of model events that ends at ``done`` or ``error`` (AMS-1..3).

    Its result is the very message the terminal event carries: ``done.message`` or
    ``error.error``. An ``error`` resolves ``result()``; it never rejects.
    """

    def __init__(self) -> None:
        """Build an empty stream of model events."""
        super().__init__(_is_terminal_model_event, _model_event_result)
