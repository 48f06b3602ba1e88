"""A buffered, single-consumer channel of events that ends in a result, and its model-event kind."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from .messages import Done, Failed

_UNSET: Any = object()


class Channel:
    """Events in push order to one ``async for`` consumer; ``result()`` is the final value."""

    def __init__(self, is_final: Callable[[Any], bool], pick_result: Callable[[Any], Any]) -> None:
        self._is_final, self._pick_result = is_final, pick_result
        self._queue: deque[Any] = deque()
        self._closed = False
        self._outcome: Any = _UNSET
        self._wakers: list[asyncio.Future[None]] = []
        self._future: asyncio.Future[Any] | None = None

    def push(self, event: Any) -> None:
        if self._closed:
            return
        self._queue.append(event)
        if self._is_final(event):
            self._closed = True
            self._settle(self._pick_result(event))
        self._wake()

    def end(self, value: Any = _UNSET) -> None:
        self._closed = True
        if value is not _UNSET:
            self._settle(value)
        self._wake()

    def result(self) -> asyncio.Future[Any]:
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
            if self._outcome is not _UNSET:
                self._future.set_result(self._outcome)
        return asyncio.shield(self._future)

    async def __aiter__(self) -> AsyncIterator[Any]:
        while True:
            if self._queue:
                yield self._queue.popleft()
            elif self._closed:
                return
            else:
                waker = asyncio.get_running_loop().create_future()
                self._wakers.append(waker)
                await waker

    def _settle(self, value: Any) -> None:
        if self._outcome is not _UNSET:
            return
        self._outcome = value
        if self._future is not None and not self._future.done():
            self._future.set_result(value)

    def _wake(self) -> None:
        wakers, self._wakers = self._wakers, []
        for waker in wakers:
            if not waker.done():
                waker.set_result(None)


class ModelChannel(Channel):
    """Ends at ``Done`` or ``Failed``; the result is the very message that event carries."""

    def __init__(self) -> None:
        super().__init__(
            lambda event: isinstance(event, Done | Failed), lambda event: event.message if isinstance(event, Done) else event.error
        )
