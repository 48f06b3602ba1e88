"""The provider adapter of chapter 05: the wire conversion and the model over a transport.

``to_provider_messages`` and ``to_provider_tools`` translate canonical messages and tool
definitions into the OpenAI-compatible wire shapes (PROV-MSG-*, PROV-TOOLS-1);
``OpenAICompatibleModel`` turns the normalized chunks of a transport into model events
(PROV-MODEL-*). The HTTP/SSE transport lives in :mod:`.provider_transport`.

A transport is any object with ``stream(request, signal)`` returning an async iterator of
chunks: ``{type: "text", delta}``, ``{type: "tool", index, id?, name?, argumentsDelta?}`` or
``{type: "finish", reason, usage?}``.

Implementation-defined points, and the choices made here: the request is built when the
producer starts (the next event-loop turn), not inside ``stream()``; a thrown error's message
is ``str(error)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any, cast

from .abort import AbortSignal
from .event_stream import AssistantMessageEventStream
from .ir import (
    AgentMessage,
    AssistantContent,
    AssistantMessage,
    AssistantOverrides,
    DoneReason,
    ErrorReason,
    StopReason,
    TextDeltaEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    Usage,
    assistant_message,
    text,
)
from .json_text import json_text
from .projection import current_system_prompt
from .provider_chunks import parse_json

ABORTED_MESSAGE = "Request was aborted"
_STOP_REASONS: dict[str, DoneReason] = {"stop": "stop", "length": "length", "tool_calls": "toolUse"}


class AbortError(Exception):
    """The call was aborted (JavaScript's ``DOMException`` named ``AbortError``)."""


def is_abort_error(error: BaseException) -> bool:
    """Whether ``error`` is an abort error: its class is named ``AbortError`` (JavaScript: its ``name``)."""
    return type(error).__name__ == "AbortError"


# --- outbound: canonical messages and tools to the wire (PROV-MSG-*, PROV-TOOLS-1) ---------


def _text_value(content: Sequence[Any]) -> str:
    return "\n".join(block["text"] for block in content if block["type"] == "text")


def _wire_arguments(call: Any) -> str:
    """The raw argument text when the call kept it (even empty), else the JSON text of its arguments."""
    raw = call.get("rawArguments")
    if raw is not None:
        return str(raw)
    arguments = call.get("arguments")
    return json_text({} if arguments is None else arguments)


def _wire_message(message: AgentMessage) -> dict[str, Any]:
    if message["role"] == "user":
        return {"role": "user", "content": _text_value(message["content"])}
    if message["role"] == "toolResult":
        text = _text_value(message["content"])
        return {"role": "tool", "tool_call_id": message["toolCallId"], "name": message["toolName"], "content": text}
    content = cast(list[Any], message["content"])
    wire: dict[str, Any] = {"role": "assistant", "content": _text_value(content) or None}
    calls = [
        {"id": block["id"], "type": "function", "function": {"name": block["name"], "arguments": _wire_arguments(block)}}
        for block in content
        if block.get("type") == "toolCall"
    ]
    if calls:
        wire["tool_calls"] = calls
    return wire


def to_provider_messages(context: Any) -> list[dict[str, Any]]:
    """The wire messages of a context: one leading system message (the replayed prompt), then the rest.

    Every system message of the transcript is left out where it stands; the transcript itself
    is never changed.
    """
    messages: list[AgentMessage] = context["messages"]
    result: list[dict[str, Any]] = []
    prompt = current_system_prompt(messages)
    if prompt:
        result.append({"role": "system", "content": prompt})
    result.extend(_wire_message(message) for message in messages if message["role"] != "system")
    return result


def to_provider_tools(tools: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    """The wire tools, or None when there are none."""
    if not tools:
        return None
    return [
        {"type": "function", "function": {"name": tool["name"], "description": tool["description"], "parameters": tool["parameters"]}}
        for tool in tools
    ]


# --- inbound: chunks to model events (PROV-MODEL-*) -------------------------------------------


class FixedTransport:
    """A transport that plays the same chunks for every request (``fixedTransport``)."""

    def __init__(self, chunks: Sequence[dict[str, Any]]) -> None:
        """Keep ``chunks`` to play them on every ``stream``."""
        self._chunks = chunks

    async def stream(self, request: dict[str, Any], signal: AbortSignal | None) -> AsyncIterator[dict[str, Any]]:
        """Yield each chunk in order."""
        for chunk in self._chunks:
            yield chunk


def fixed_transport(chunks: Sequence[dict[str, Any]]) -> FixedTransport:
    """A transport that plays ``chunks``."""
    return FixedTransport(chunks)


class _Buffer:
    """One tool call being assembled from the chunks of its provider index."""

    def __init__(self, index: int, content_index: int) -> None:
        self.id = f"call-{index}"
        self.name = ""
        self.text = ""
        self.content_index = content_index

    def block(self, arguments: object) -> ToolCall:
        return {"type": "toolCall", "id": self.id, "name": self.name, "arguments": arguments, "rawArguments": self.text}


class Assembly:
    """The content of one call, built in first-appearance order, and the partials it shows."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.content: list[AssistantContent] = []
        self.text_index: int | None = None
        self.text_so_far = ""
        self.buffers: dict[int, _Buffer] = {}

    def message(self, reason: StopReason, usage: Usage | None = None, error: str | None = None) -> AssistantMessage:
        overrides: AssistantOverrides = {"provider": self.provider, "model": self.model}
        if usage is not None:
            overrides["usage"] = usage
        if error is not None:
            overrides["errorMessage"] = error
        # assistant_message copies the list; blocks are replaced, never changed, so that is a snapshot.
        return assistant_message(self.content, reason, overrides)

    def text(self, chunk: dict[str, Any]) -> TextDeltaEvent:
        self.text_so_far += chunk["delta"]
        self.text_index = self._place(self.text_index, text(self.text_so_far))
        return {"type": "text_delta", "contentIndex": self.text_index, "delta": chunk["delta"], "partial": self.message("stop")}

    def tool(self, chunk: dict[str, Any]) -> ToolCallDeltaEvent:
        buffer = self.buffers.get(chunk["index"])
        if buffer is None:
            buffer = self.buffers[chunk["index"]] = _Buffer(chunk["index"], len(self.content))
        buffer.id = chunk.get("id") or buffer.id
        buffer.name = chunk.get("name") or buffer.name
        delta = chunk.get("argumentsDelta") or ""
        buffer.text += delta
        self._place(buffer.content_index, buffer.block(buffer.text))
        return {"type": "toolcall_delta", "contentIndex": buffer.content_index, "delta": delta, "partial": self.message("stop")}

    def _place(self, index: int | None, block: AssistantContent) -> int:
        """Put ``block`` at ``index``, or at the end when it has no place yet; its index."""
        if index is None or index == len(self.content):
            self.content.append(block)
            return len(self.content) - 1
        self.content[index] = block
        return index

    def end(self, index: int, buffer: _Buffer, reason: StopReason) -> ToolCallEndEvent:
        arguments: object = buffer.text
        if reason == "toolUse":
            try:
                arguments = parse_json(buffer.text or "{}")
            except ValueError:
                raise ValueError(f"Tool {buffer.name or index} arguments 不是完整 JSON") from None
        call = buffer.block(arguments)
        self.content[buffer.content_index] = call
        partial = self.message(reason)
        return {"type": "toolcall_end", "contentIndex": buffer.content_index, "toolCall": call, "partial": partial}


def _usage(value: dict[str, Any] | None) -> Usage:
    given = value or {}
    input_tokens = 0 if given.get("input") is None else given["input"]
    output_tokens = 0 if given.get("output") is None else given["output"]
    total = input_tokens + output_tokens if given.get("totalTokens") is None else given["totalTokens"]
    return {"input": input_tokens, "output": output_tokens, "totalTokens": total}


class OpenAICompatibleModel:
    """A model that asks a transport for chunks and translates them into events."""

    #: How one call's content is assembled (an attribute, so that a variant in the tests can replace it).
    assembly_type: type[Assembly] = Assembly

    def __init__(self, provider: str, model: str, transport: Any) -> None:
        """Build a model named ``provider``/``model`` over ``transport``."""
        self.provider = provider
        self.model = model
        self.transport = transport
        self._tasks: set[asyncio.Task[None]] = set()

    def stream(self, context: Any, signal: AbortSignal | None = None) -> AssistantMessageEventStream:
        """Push ``start`` now and return the stream; the chunks are read in a task of their own."""
        stream = AssistantMessageEventStream()
        assembly = self.assembly_type(self.provider, self.model)
        stream.push({"type": "start", "partial": assembly.message("stop")})
        task = asyncio.get_running_loop().create_task(self._produce(stream, assembly, context, signal))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return stream

    def _request(self, context: Any) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": to_provider_messages(context)}
        tools = to_provider_tools(context.get("tools"))
        if tools is not None:
            request["tools"] = tools
        return request

    async def _produce(self, stream: AssistantMessageEventStream, assembly: Assembly, context: Any, signal: AbortSignal | None) -> None:
        try:
            finish = await self._read(stream, assembly, self.transport.stream(self._request(context), signal), signal)
            if finish is None:
                raise ValueError("Provider stream ended without a finish chunk")
            reason = _STOP_REASONS[finish["reason"]]
            for index, buffer in sorted(assembly.buffers.items(), key=lambda item: item[1].content_index):
                stream.push(assembly.end(index, buffer, reason))
            message = assembly.message(reason, usage=_usage(finish.get("usage")))
            # The terminal event settles result() too (AMS-2): no end() needed.
            stream.push({"type": "done", "reason": reason, "message": message})
        except Exception as error:
            aborted = (signal is not None and signal.aborted) or is_abort_error(error)
            failure: ErrorReason = "aborted" if aborted else "error"
            failed = assembly.message(failure, error=str(error))
            stream.push({"type": "error", "reason": failure, "error": failed})

    async def _read(
        self, stream: AssistantMessageEventStream, assembly: Assembly, chunks: AsyncGenerator[dict[str, Any], None], signal: Any
    ) -> dict[str, Any] | None:
        """Apply every chunk, checking the signal before each; the last finish chunk, if any."""
        finish: dict[str, Any] | None = None
        # As JavaScript's for-await does on an early exit: the transport releases what it holds.
        async with aclosing(chunks):
            async for chunk in chunks:
                if signal is not None and signal.aborted:
                    raise AbortError(ABORTED_MESSAGE)
                if chunk["type"] == "text":
                    stream.push(assembly.text(chunk))
                elif chunk["type"] == "tool":
                    stream.push(assembly.tool(chunk))
                else:
                    finish = chunk
        return finish


def create_openai_compatible_model(provider: str, model: str, transport: Any) -> OpenAICompatibleModel:
    """``createOpenAICompatibleModel({provider, model, transport})``."""
    return OpenAICompatibleModel(provider, model, transport)
