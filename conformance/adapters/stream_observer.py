"""Observations of a port's async stream: its consumers, its ``result()`` and a hand-driven ``next()``.

Each waits for what it observes only until the event loop is idle or the settle deadline passes
(:func:`conformance.adapters.event_loop.wait_settled`), and turns what the port gave into JSON
through the binding's own ``to_json``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.event_loop import settle, wait_settled
from conformance.common.jsontypes import JsonObject, JsonValue


def describe_exception(error: BaseException) -> str:
    """``Type: message`` of an exception raised by the implementation."""
    return f"{type(error).__name__}: {error}"


@dataclass
class Consumer:
    """One async consumer of a stream and what it has received so far."""

    received: list[Any] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    #: Called with the count of events received so far, after each one (faux_provider's ``abort_after``).
    on_event: Callable[[int], None] | None = None


@dataclass(frozen=True)
class StreamObserver:
    """Observes one binding's streams, within its settle deadline."""

    #: The binding's conversion of a port's value to JSON (value, what it is).
    to_json: Callable[[Any, str], JsonValue]
    settle_deadline_s: float

    async def next(self, stream: Any, iterator: list[Any]) -> JsonObject:
        """One hand-driven step of the stream's async iterator (``__anext__``)."""
        try:
            if not iterator:
                iterator.append(stream.__aiter__())
            future = asyncio.ensure_future(iterator[0].__anext__())
        except Exception as error:
            return {"state": "rejected", "error": f"next() threw {describe_exception(error)}"}
        if not await wait_settled(future, self.settle_deadline_s):
            return {"state": "pending"}
        failure = future.exception()
        if isinstance(failure, StopAsyncIteration):
            return {"state": "resolved", "done": True, "value": None}
        if failure is not None:
            return {"state": "rejected", "error": describe_exception(failure)}
        return {"state": "resolved", "done": False, "value": self.to_json(future.result(), "the event next() gave")}

    async def start_consumer(self, stream: Any, consumer: Consumer) -> None:
        """Start iterating the stream in a task of its own (once), and let it take what is ready."""

        async def consume() -> None:
            async for event in stream:
                consumer.received.append(event)
                if consumer.on_event is not None:
                    consumer.on_event(len(consumer.received))

        if consumer.task is None:
            consumer.task = asyncio.ensure_future(consume())
            await settle()

    async def finish_consumer(self, stream: Any, consumer: Consumer) -> JsonObject:
        """Wait for the consumer to finish; the events it received, serialized now, and whether it finished."""
        try:
            if consumer.task is None:
                await self.start_consumer(stream, consumer)
            assert consumer.task is not None
            await wait_settled(consumer.task, self.settle_deadline_s)
        except Exception as error:
            return {"events": self.to_json(consumer.received, "the events"), "finished": False, "threw": describe_exception(error)}
        # Serialized now, after the stream finished (spec/spec.md, Notes for porters): a partial shared
        # between events and changed by later ones shows in every event that holds it.
        observation: JsonObject = {"events": self.to_json(consumer.received, "the events"), "finished": consumer.task.done()}
        if consumer.task.done() and consumer.task.exception() is not None:
            observation["finished"] = False
            observation["threw"] = f"iteration threw {describe_exception(consumer.task.exception())}"  # type: ignore[arg-type]
        return observation

    async def result(self, stream: Any, identities: dict[str, Any]) -> JsonObject:
        """The state of ``stream.result()``, its value and which of ``identities`` it is (``same_object_as``)."""
        try:
            future = asyncio.ensure_future(stream.result())
        except Exception as error:
            return {"state": "rejected", "error": f"result() threw {describe_exception(error)}", "same_object_as": None}
        if not await wait_settled(future, self.settle_deadline_s):
            # Not cancelled: it may be the port's own future, which a later result() must still find.
            return {"state": "pending", "same_object_as": None}
        failure = future.exception()
        if failure is not None:
            return {"state": "rejected", "error": describe_exception(failure), "same_object_as": None}
        value = future.result()
        same = next((name for name, candidate in identities.items() if candidate is value), None)
        return {"state": "resolved", "value": self.to_json(value, "the result"), "same_object_as": same}
