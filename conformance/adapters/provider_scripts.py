"""The adapter's own actors in chapter 05 scenarios: a scripted transport, a scripted fetch, a consumer that pauses.

Nothing here is student code: the transport plays a case's ``script`` and the fetch serves a
case's SSE body, each recording what it was asked. Both wait for an abort only through the
scenario's own ``aborted`` event (set by the ``abort`` step), so no implementation's signal
needs listeners; a wait that nothing ends leaves the loop idle, and the step reports it
instead of hanging.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from conformance.adapters.event_loop import wait_settled
from conformance.common.jsontypes import JsonObject, JsonValue

ABORTED_MESSAGE = "Request was aborted"


class AbortError(Exception):
    """What a scripted body fails with once the call is aborted (when the binding has no ``AbortError``)."""


def identity(given: Any, expected: Any) -> str:
    """``same`` for the very object, ``absent`` for none, ``other`` for another one."""
    if given is None:
        return "absent"
    return "same" if expected is not None and given is expected else "other"


class ScriptedTransport:
    """A transport that plays ``script`` (``chunk``, ``throw``, ``wait_for_abort``) and records each request."""

    def __init__(self, script: list[JsonObject], aborted: asyncio.Event) -> None:
        self._script = script
        self._aborted = aborted
        #: Each request (a deep copy, taken when it arrived) and the signal it came with.
        self.calls: list[tuple[Any, Any]] = []

    def stream(self, request: Any, signal: Any = None) -> AsyncIterator[Any]:
        self.calls.append((copy.deepcopy(request), signal))
        return self._play()

    async def _play(self) -> AsyncIterator[Any]:
        for action in self._script:
            if "chunk" in action:
                yield copy.deepcopy(action["chunk"])
            elif "throw" in action:
                raise RuntimeError(action["throw"])
            else:
                await self._aborted.wait()


def sse_body(spec: JsonObject) -> bytes:
    """The body's bytes: ``body`` verbatim, or one ``data: PAYLOAD`` event per payload (JSON.stringify's text)."""
    if "body" in spec:
        return str(spec["body"]).encode("utf-8")
    payloads: list[JsonValue] = spec.get("payloads", [])  # type: ignore[assignment]
    texts = [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in payloads]
    return "".join(f"data: {text}\n\n" for text in texts).encode("utf-8")


def pieces(body: bytes, split: JsonValue) -> list[bytes]:
    """``middle`` (the default): two halves; ``none``: one piece; a list of byte offsets: cut at each."""
    if split == "none":
        return [body]
    offsets = [len(body) // 2] if not isinstance(split, list) else [int(str(offset)) for offset in split]
    return [body[start:end] for start, end in itertools.pairwise([0, *offsets, len(body)])]


class _Response:
    """What the scripted fetch resolves with: ``status``, ``ok``, ``headers`` and the body's pieces."""

    def __init__(self, status: int, body: AsyncIterator[bytes] | None) -> None:
        self.status = status
        self.ok = 200 <= status <= 299
        self.headers = {"content-type": "text/event-stream"}
        self.body = body


class ScriptedFetch:
    """``fetch(url, init)``: records the call, then rejects (``throw``) or serves the case's SSE body."""

    def __init__(self, spec: JsonObject, aborted: asyncio.Event, abort_error: type[BaseException] | None) -> None:
        self._spec = spec
        self._aborted = aborted
        self._abort_error: Callable[[str], BaseException] = abort_error or AbortError
        self.calls: list[tuple[Any, Any]] = []

    async def __call__(self, url: Any, init: Any = None) -> _Response:
        self.calls.append((url, init))
        if "throw" in self._spec:
            raise RuntimeError(self._spec["throw"])
        body = None if self._spec.get("no_body") else self._body()
        return _Response(int(self._spec.get("status", 200)), body)  # type: ignore[arg-type]

    async def _body(self) -> AsyncIterator[bytes]:
        for piece in pieces(sse_body(self._spec), self._spec.get("split")):
            yield piece
        if self._spec.get("then") == "hang":
            # As a real body does: it stays open until the request is aborted, then fails with an AbortError.
            await self._aborted.wait()
            raise self._abort_error(ABORTED_MESSAGE)


def _init_field(init: Any, name: str) -> Any:
    return init.get(name) if isinstance(init, dict) else getattr(init, name, None)


def fetch_record(url: Any, init: Any, signal: Any) -> JsonObject:
    """One fetch call as observed: url, method, headers (names lowercased), body (parsed JSON, else its text), signal."""
    headers = _init_field(init, "headers") or {}
    body = _init_field(init, "body")
    try:
        parsed: JsonValue = json.loads(body) if isinstance(body, str | bytes) else None
    except ValueError:
        parsed = body if isinstance(body, str) else None
    return {
        "url": str(url),
        "method": _init_field(init, "method"),
        "headers": {str(name).lower(): str(value) for name, value in dict(headers).items()},
        "body": parsed,
        "signal": identity(_init_field(init, "signal"), signal),
    }


class PausingConsumer:
    """Iterates a stream in a task of its own, pausing after the first item of a given type when asked to."""

    def __init__(self, stream: Any, type_of: Callable[[Any], Any]) -> None:
        self._stream = stream
        self._type_of = type_of
        self.received: list[Any] = []
        self._until: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._resume: asyncio.Future[None] | None = None
        self._stopped: asyncio.Future[None] | None = None

    async def advance(self, until: str | None, deadline_s: float) -> None:
        """Take items until one of type ``until`` (None: to the end), the stream ends, or nothing more can come."""
        loop = asyncio.get_running_loop()
        self._until = until
        self._stopped = loop.create_future()
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
            self._task.add_done_callback(lambda _task: self._stop())
        elif self._task.done():
            return
        elif self._resume is not None and not self._resume.done():
            self._resume.set_result(None)
        await wait_settled(self._stopped, deadline_s)

    async def _run(self) -> None:
        async for item in self._stream:
            self.received.append(item)
            if self._until is not None and self._type_of(item) == self._until:
                self._resume = asyncio.get_running_loop().create_future()
                self._stop()
                await self._resume

    def _stop(self) -> None:
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)

    def finished(self) -> bool:
        """Whether the iteration is over (ended or failed)."""
        return self._task is not None and self._task.done()

    def failure(self) -> BaseException | None:
        """What the iteration raised, once it is over."""
        if self._task is None or not self._task.done() or self._task.cancelled():
            return None
        return self._task.exception()
