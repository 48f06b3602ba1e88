"""The faux provider and its constructors (spec/pi-ai-1/spec.md: PA-FAUXMSG in section 1, and section 4).

``faux_provider(options)`` returns a :class:`FauxProvider` handle whose ``provider.stream(model,
context, options)`` plays queued response steps. A step is an assistant message, or a function
called as ``step(context, options, state, model)`` that returns one (or an awaitable of one).
Not ported: deferred responses, ``onResponse`` callbacks (spec/pi-ai-1/porting.md, "Not covered").
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .event_stream import AssistantMessageEventStream, now_ms
from .js_text import concat, stringify, utf16_chunks
from .usage import estimate_tokens, with_usage_estimate, zero_usage

NO_MORE_RESPONSES = "No more faux responses queued"
ABORTED = "Request was aborted"
NO_STOP_REASON = "Faux response ended without a stop reason"
DEFAULT_MODEL_ID = "faux-1"


def _random_id(prefix: str) -> str:
    return f"{prefix}:{now_ms()}:{secrets.token_hex(5)}"


def faux_text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def faux_thinking(thinking: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": thinking}


def faux_tool_call(name: str, arguments: dict[str, Any], id: str | None = None) -> dict[str, Any]:
    return {"type": "toolCall", "id": _random_id("tool") if id is None else id, "name": name, "arguments": arguments}


def faux_assistant_message(content: Any, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """An assistant message of the faux model: a string becomes one text block, one block a list of it (PA-FAUXMSG-2)."""
    options = options or {}
    blocks = [faux_text(content)] if isinstance(content, str) else content if isinstance(content, list) else [content]
    message = {"role": "assistant", "content": blocks, "api": "faux", "provider": "faux", "model": DEFAULT_MODEL_ID, "usage": zero_usage()}
    message["stopReason"] = _given(options.get("stopReason"), "stop")
    message.update({key: options[key] for key in ("deferred", "errorMessage", "responseId") if key in options})
    message["timestamp"] = _given(options.get("timestamp"), now_ms())
    return message


def _given(value: Any, default: Any) -> Any:
    """JavaScript's ``value ?? default``."""
    return default if value is None else value


@dataclass
class FauxState:
    """What the provider counts; factories see it, the call they serve already counted."""

    call_count: int = 0


@dataclass
class Provider:
    """The provider a handle registers: its id, its models and ``stream``."""

    id: str
    models: list[dict[str, Any]]
    stream: Callable[..., AssistantMessageEventStream]


def faux_provider(options: dict[str, Any] | None = None) -> FauxProvider:
    """``fauxProvider(options)``: ``api``, ``provider``, ``models``, ``tokenSize: {min, max}``, ``tokensPerSecond``."""
    return FauxProvider(options or {})


class FauxProvider:
    """The handle ``faux_provider()`` returns: the provider, its models, the response queue and the state."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.api: str = _given(options.get("api"), _random_id("faux"))
        size = options.get("tokenSize") or {}
        self._min_tokens = max(1, min(_given(size.get("min"), 3), _given(size.get("max"), 5)))
        self._max_tokens = max(self._min_tokens, _given(size.get("max"), 5))
        self._tokens_per_second = options.get("tokensPerSecond")
        self.state = FauxState()
        provider_id = _given(options.get("provider"), "faux")
        definitions = options.get("models") or [{"id": DEFAULT_MODEL_ID, "name": "Faux Model", "reasoning": False}]
        self.models = [self._model(definition, provider_id) for definition in definitions]
        self.provider = Provider(provider_id, self.models, self.stream)
        self._pending: list[Any] = []
        self._prompt_cache: dict[str, str] = {}
        self._producers: set[asyncio.Task[None]] = set()  # held, so that the loop does not lose them

    def _model(self, definition: dict[str, Any], provider_id: str) -> dict[str, Any]:
        model = {"id": definition["id"], "name": _given(definition.get("name"), definition["id"]), "api": self.api, "provider": provider_id}
        model.update({"baseUrl": "http://localhost:0", "reasoning": _given(definition.get("reasoning"), False)})
        model["input"] = _given(definition.get("input"), ["text", "image"])
        if definition.get("inputLimits") is not None:
            model["inputLimits"] = definition["inputLimits"]
        model["cost"] = _given(definition.get("cost"), {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0})
        model["contextWindow"] = _given(definition.get("contextWindow"), 128000)
        model["maxTokens"] = _given(definition.get("maxTokens"), 16384)
        return model

    # -- the queue (PA-FAUX-QUEUE-2) ------------------------------------------------------------

    def set_responses(self, steps: list[Any]) -> None:
        self._pending = list(steps)

    def append_responses(self, steps: list[Any]) -> None:
        self._pending.extend(steps)

    def get_pending_response_count(self) -> int:
        return len(self._pending)

    def get_model(self, id: str | None = None) -> dict[str, Any] | None:
        """The model of that id (None if there is none); the first model without an id."""
        if not id:
            return self.models[0]
        return next((model for model in self.models if model["id"] == id), None)

    # -- playing ---------------------------------------------------------------------------------

    def stream(self, model: dict[str, Any], context: dict[str, Any], options: dict[str, Any] | None = None) -> AssistantMessageEventStream:
        """Take the next step now, count the call, and produce its events later, in a task (PA-FAUX-QUEUE-1)."""
        outer = AssistantMessageEventStream()
        step = self._pending.pop(0) if self._pending else None
        self.state.call_count += 1
        producer = asyncio.get_running_loop().create_task(self._produce(outer, step, model, context, options or {}))
        self._producers.add(producer)
        producer.add_done_callback(self._producers.discard)
        return outer

    async def _produce(
        self, outer: AssistantMessageEventStream, step: Any, model: dict[str, Any], context: dict[str, Any], options: dict[str, Any]
    ) -> None:
        try:
            if step is None:  # an empty queue is reported before an abort (PA-FAUX-EXHAUST-1, PA-FAUX-ABORT-2)
                _fail(outer, with_usage_estimate(self._error_message(NO_MORE_RESPONSES, model), context, options, self._prompt_cache))
                return
            resolved = step(context, options, self.state, model) if callable(step) else step  # PA-FAUX-REQ-1
            if inspect.isawaitable(resolved):
                resolved = await resolved
            message = with_usage_estimate(self._played_copy(resolved, model), context, options, self._prompt_cache)
            await self._play(outer, message, options.get("signal"))
        except Exception as error:  # a factory that throws, or a pending step (PA-FAUX-ERR-1, PA-FAUX-DONE-2)
            _fail(outer, self._error_message(str(error), model))

    def _played_copy(self, message: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
        """A deep copy of the step's message under this provider's names (PA-FAUX-MODEL-1, PA-FAUX-COPY-1)."""
        cloned = copy.deepcopy(message)
        timestamp, usage = _given(cloned.get("timestamp"), now_ms()), _given(cloned.get("usage"), zero_usage())
        return {**cloned, "api": self.api, "provider": self.provider.id, "model": model["id"], "timestamp": timestamp, "usage": usage}

    def _error_message(self, text: str, model: dict[str, Any]) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": [],
            "api": self.api,
            "provider": self.provider.id,
            "model": model["id"],
            "usage": zero_usage(),
            "stopReason": "error",
            "errorMessage": text,
            "timestamp": now_ms(),
        }

    async def _play(self, outer: AssistantMessageEventStream, message: dict[str, Any], signal: Any) -> None:
        """``start``, then each block's start, deltas and end, then the terminal event (PA-FAUX-PLAY-1, PA-FAUX-DONE-1, -2).

        Each event gets a new top-level partial, but the partial's blocks are shared and grown
        in place, and its content list is replaced only when a block starts (PA-FAUX-PLAY-3).
        """
        partial = {**message, "content": [], "stopReason": "pending"}
        if _aborted(signal):
            _abort(outer, partial)
            return
        outer.push({"type": "start", "partial": {**partial}})
        for index, block in enumerate(message["content"]):
            if _aborted(signal) or not await self._play_block(outer, partial, index, block, signal):
                _abort(outer, partial)
                return
        if message["stopReason"] == "pending":
            raise RuntimeError(NO_STOP_REASON)
        if message["stopReason"] in ("error", "aborted"):
            _fail(outer, message, message["stopReason"])
        else:
            outer.push({"type": "done", "reason": message["stopReason"], "message": message})
            outer.end(message)

    async def _play_block(
        self, outer: AssistantMessageEventStream, partial: dict[str, Any], index: int, block: dict[str, Any], signal: Any
    ) -> bool:
        """One block's ``X_start``, ``X_delta`` per chunk and ``X_end``; False when the signal aborted it before a chunk."""
        kind = block["type"] if block["type"] in ("text", "thinking") else "toolcall"
        if kind == "toolcall":
            live = {"type": "toolCall", "id": block["id"], "name": block["name"], "arguments": {}}
            streamed = stringify(block["arguments"])  # PA-FAUX-TOOL-1
        else:
            live, streamed = {"type": kind, kind: ""}, block[kind]
        partial["content"] = [*partial["content"], live]
        outer.push({"type": f"{kind}_start", "contentIndex": index, "partial": {**partial}})
        read = ""
        for chunk in self._chunks(streamed):
            await self._pace(chunk)
            if _aborted(signal):
                return False
            read = concat(read, chunk)
            if kind == "toolcall":
                live["arguments"] = _parse_partial(read, live["arguments"])
            else:
                live[kind] = read
            outer.push({"type": f"{kind}_delta", "contentIndex": index, "delta": chunk, "partial": {**partial}})
        if kind == "toolcall":
            live["arguments"] = block["arguments"]
            outer.push({"type": "toolcall_end", "contentIndex": index, "toolCall": block, "partial": {**partial}})
        else:
            outer.push({"type": f"{kind}_end", "contentIndex": index, "content": block[kind], "partial": {**partial}})
        return True

    def _chunks(self, text: str) -> list[str]:
        """Chunks of 4 x (a token size drawn between min and max) UTF-16 code units; "" gives one empty chunk (PA-FAUX-CHUNK-1)."""
        return utf16_chunks(text, lambda: max(1, 4 * random.randint(self._min_tokens, self._max_tokens))) or [""]

    async def _pace(self, chunk: str) -> None:
        """Yield to the loop before each chunk; with ``tokensPerSecond``, wait as long as the chunk would take."""
        rate = self._tokens_per_second
        await asyncio.sleep(estimate_tokens(chunk) / rate if rate and rate > 0 else 0)


def _aborted(signal: Any) -> bool:
    return bool(signal is not None and signal.aborted)


def _fail(outer: AssistantMessageEventStream, message: dict[str, Any], reason: str = "error") -> None:
    outer.push({"type": "error", "reason": reason, "error": message})
    outer.end(message)


def _abort(outer: AssistantMessageEventStream, partial: dict[str, Any]) -> None:
    """End with the partial as an aborted error (PA-FAUX-ABORT-1, PA-FAUX-ABORT-3)."""
    _fail(outer, {**partial, "stopReason": "aborted", "errorMessage": ABORTED, "timestamp": now_ms()}, "aborted")


def _parse_partial(text: str, previous: Any) -> Any:
    """The arguments read so far. Upstream parses the prefix leniently; only the final value is observable (PA-FAUX-TOOL-1)."""
    try:
        return json.loads(text)
    except ValueError:
        return previous


@dataclass
class AbortSignal:
    """``AbortSignal``: ``aborted`` turns True once its controller aborts."""

    aborted: bool = False


@dataclass
class AbortController:
    """``AbortController``: ``abort()`` aborts its ``signal``."""

    signal: AbortSignal = field(default_factory=AbortSignal)

    def abort(self) -> None:
        self.signal.aborted = True
