"""``EventStream`` and ``AssistantMessageEventStream`` (spec/pi-ai-1/spec.md, section 3: PA-STREAM, PA-AMS).

A producer ``push``es events and ``end``s the stream; one consumer iterates it with ``async
for``; ``await stream.result()`` gives the result. Iterating and ``result()`` need a running
asyncio loop; ``push`` and ``end`` do not.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

_MISSING: Any = object()  # end() was called without an argument
_END: Any = object()  # what end() hands a waiting consumer
_TERMINAL_FIELDS = {"done": "message", "error": "error"}  # an assistant stream's terminal events, and their result's field


def now_ms() -> int:
    """``Date.now()``: milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


class EventStream:
    """A buffered stream of events; the first event ``is_complete`` accepts settles ``result()`` and ends it."""

    def __init__(self, is_complete: Callable[[Any], bool], extract_result: Callable[[Any], Any]) -> None:
        self._is_complete = is_complete
        self._extract_result = extract_result
        self._queue: deque[Any] = deque()
        self._waiting: deque[asyncio.Future[Any]] = deque()  # consumers waiting for the next event
        self.done = False
        self._result: list[Any] = []  # [value] once settled: a promise settles once
        self._result_waiters: list[asyncio.Future[None]] = []

    def push(self, event: Any) -> None:
        """Deliver ``event`` (PA-STREAM-1); a terminal one settles ``result()`` (PA-STREAM-2); ignored once done (PA-STREAM-3)."""
        if self.done:
            return
        if self._is_complete(event):
            self.done = True
            self._settle(self._extract_result(event))
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():  # a consumer cancelled while it waited leaves a done future
                waiter.set_result(event)
                return
        self._queue.append(event)

    def end(self, result: Any = _MISSING) -> None:
        """Mark the stream done, settle ``result()`` with ``result`` if given and nothing settled it (PA-STREAM-4)."""
        self.done = True
        if result is not _MISSING:
            self._settle(result)
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(_END)

    async def __aiter__(self) -> AsyncIterator[Any]:
        """Every event in push order; ends once the stream is done and the buffer is empty."""
        while True:
            if self._queue:
                yield self._queue.popleft()
            elif self.done:
                return
            else:
                waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                self._waiting.append(waiter)
                event = await waiter
                if event is _END:
                    return
                yield event

    async def result(self) -> Any:
        """The result: the terminal event's extracted value, or ``end()``'s argument; waits forever if neither comes."""
        if not self._result:
            # One future per caller: a caller that gives up waiting cancels only its own.
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._result_waiters.append(waiter)
            await waiter
        return self._result[0]

    def _settle(self, value: Any) -> None:
        if self._result:
            return
        self._result.append(value)
        for waiter in self._result_waiters:
            if not waiter.done():
                waiter.set_result(None)


class AssistantMessageEventStream(EventStream):
    """The stream of one assistant response: ``done`` and ``error`` are terminal (PA-AMS-1), and it times the response (PA-AMS-2)."""

    def __init__(self) -> None:
        super().__init__(lambda event: event.get("type") in _TERMINAL_FIELDS, lambda event: event[_TERMINAL_FIELDS[event["type"]]])
        self._started_at = now_ms()
        self._started = time.perf_counter()

    def push(self, event: Any) -> None:
        if event.get("type") in _TERMINAL_FIELDS:
            self._time(event.get(_TERMINAL_FIELDS[event["type"]]))
        super().push(event)

    def end(self, result: Any = _MISSING) -> None:
        if result is not _MISSING:
            self._time(result)
        super().end(result)

    def _time(self, message: Any) -> None:
        """Set ``durationMs`` on a message this stream saw start: not timed yet and not older than the stream."""
        if self.done or not isinstance(message, dict) or "durationMs" in message:
            return
        timestamp = message.get("timestamp")
        if isinstance(timestamp, int | float) and timestamp < self._started_at:
            return
        message["durationMs"] = max(0, int((time.perf_counter() - self._started) * 1000 + 0.5))
