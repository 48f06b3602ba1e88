"""Broken variants of the chapter 05 reference (``reference_impl/provider_*.py``), one bug each.

Each :class:`ProviderVariant` names the clause its bug breaks and the lab that clause belongs
to; ``tests/judging/test_provider_variants.py`` proves that the variant fails its named case,
and only cases of its lab that cite that clause.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import reference_impl
from reference_impl import provider_adapter as adapter
from reference_impl import provider_transport as transport
from reference_impl.json_text import json_text
from reference_impl.projection import system_message_text
from reference_impl.provider_chunks import ParsedPayload, parse_payload
from tests.support.variants import reference_binding


@dataclass(frozen=True)
class ProviderVariant:
    """A broken binding, the clause it breaks, its lab, and one case that must fail."""

    name: str
    binding: Any
    clause: str
    lab: str
    failing_case: str
    message_fragment: str


# -- lab 5.1: the wire conversion -----------------------------------------------------------


def _messages_with_system_in_place(context: Any) -> list[dict[str, Any]]:
    # No folding: each system message goes out where it stands.
    return [
        {"role": "system", "content": system_message_text(message)}
        if message["role"] == "system"
        else adapter.to_provider_messages({"messages": [message]})[0]
        for message in context["messages"]
    ]


def _messages_rewriting(context: Any, change: Any) -> list[dict[str, Any]]:
    wire = adapter.to_provider_messages(context)
    for message in wire:
        change(message)
    return wire


def _messages_ignoring_raw_arguments(context: Any) -> list[dict[str, Any]]:
    stripped = copy.deepcopy(context)
    for message in stripped["messages"]:
        for block in message.get("content", []) if message["role"] == "assistant" else []:
            block.pop("rawArguments", None)
    return adapter.to_provider_messages(stripped)


def _empty_text_not_null(message: dict[str, Any]) -> None:
    if message["role"] == "assistant" and message["content"] is None:
        message["content"] = ""


def _tool_result_with_is_error(context: Any) -> list[dict[str, Any]]:
    wire = adapter.to_provider_messages(context)
    results = iter(message for message in context["messages"] if message["role"] == "toolResult")
    for message in wire:
        if message["role"] == "tool":
            message["isError"] = next(results)["isError"]
    return wire


def _user_text_without_empty_blocks(context: Any) -> list[dict[str, Any]]:
    trimmed = copy.deepcopy(context)
    for message in trimmed["messages"]:
        if message["role"] == "user":
            message["content"] = [block for block in message["content"] if block.get("text")]
    return adapter.to_provider_messages(trimmed)


def _tools_keeping_empty_list(tools: Any = None) -> Any:
    return [] if tools == [] else adapter.to_provider_tools(tools)


# -- lab 5.2: the model ---------------------------------------------------------------------


class _ChunkIndexAsContentIndex(adapter.Assembly):
    def tool(self, chunk: dict[str, Any]) -> Any:
        event = super().tool(chunk)
        event["contentIndex"] = chunk["index"]
        return event


class _TextMutatedInPlace(adapter.Assembly):
    def text(self, chunk: dict[str, Any]) -> Any:
        if self.text_index is None:
            self.text_index = len(self.content)
            self.content.append({"type": "text", "text": ""})
        block: Any = self.content[self.text_index]
        block["text"] += chunk["delta"]  # in place, and the partial below shares the block
        partial = reference_impl.assistant_message(list(self.content), "stop", {"provider": self.provider, "model": self.model})
        return {"type": "text_delta", "contentIndex": self.text_index, "delta": chunk["delta"], "partial": partial}


class _ParsingEveryReason(adapter.Assembly):
    def end(self, index: int, buffer: Any, reason: Any) -> Any:
        event = super().end(index, buffer, "toolUse")
        event["partial"]["stopReason"] = reason
        return event


class _ErrorWithoutPartial(adapter.Assembly):
    def message(self, reason: Any, usage: Any = None, error: str | None = None) -> Any:
        message = super().message(reason, usage, error)
        if reason in ("error", "aborted"):
            message["content"] = []
        return message


class _BrokenJsonNamedByContentIndex(adapter.Assembly):
    def end(self, index: int, buffer: Any, reason: Any) -> Any:
        return super().end(buffer.content_index, buffer, reason)


def _model_with(assembly: type[adapter.Assembly]) -> Any:
    kind = type("VariantModel", (adapter.OpenAICompatibleModel,), {"assembly_type": assembly})

    def create(provider: str, model: str, transport: Any) -> Any:
        return kind(provider, model, transport)

    return create


class _ModelNotCheckingAbort(adapter.OpenAICompatibleModel):
    async def _read(self, stream: Any, assembly: Any, chunks: Any, signal: Any) -> Any:
        return await super()._read(stream, assembly, chunks, None)


class _RewritingTransport:
    """Wraps a transport, passing its chunks through ``rewrite`` (which may add some at the end)."""

    def __init__(self, inner: Any, rewrite: Any) -> None:
        self._inner = inner
        self._rewrite = rewrite

    def stream(self, request: Any, signal: Any = None) -> AsyncIterator[Any]:
        rewritten: AsyncIterator[Any] = self._rewrite(self._inner.stream(request, signal))
        return rewritten


async def _total_not_summed(chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for chunk in chunks:
        if chunk["type"] == "finish" and "usage" in chunk and "totalTokens" not in chunk["usage"]:
            chunk = {**chunk, "usage": {**chunk["usage"], "totalTokens": 0}}
        yield chunk


async def _missing_finish_is_stop(chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
    finished = False
    async for chunk in chunks:
        finished = finished or chunk["type"] == "finish"
        yield chunk
    if not finished:
        yield {"type": "finish", "reason": "stop"}


def _model_over(rewrite: Any) -> Any:
    def create(provider: str, model: str, transport: Any) -> Any:
        return adapter.OpenAICompatibleModel(provider, model, _RewritingTransport(transport, rewrite))

    return create


# -- lab 5.3: the transport -----------------------------------------------------------------


def _transport_with(**attributes: Any) -> Any:
    kind = type("VariantTransport", (transport.OpenAICompatibleTransport,), attributes)

    def create(base_url: str, api_key: str, fetch: Any = None) -> Any:
        return kind(base_url, api_key, fetch)

    return create


def _keeping_trailing_slash(base_url: str, api_key: str, fetch: Any = None) -> Any:
    created = transport.OpenAICompatibleTransport(base_url, api_key, fetch)
    created._endpoint = f"{base_url}/chat/completions"
    return created


def _init_with_key_in_body(self: Any, request: Any, signal: Any) -> dict[str, Any]:
    init = transport.OpenAICompatibleTransport._init(self, request, signal)
    init["body"] = json_text({**request, "apiKey": self._api_key, "stream": True, "stream_options": {"include_usage": True}})
    return init


def _ignoring_status(base_url: str, api_key: str, fetch: Any = None) -> Any:
    async def always_ok(url: str, init: Any) -> Any:
        response = await fetch(url, init)
        response.ok = True
        return response

    return transport.OpenAICompatibleTransport(base_url, api_key, always_ok)


def _events_over(change: Any) -> Any:
    async def changed(body: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        async for piece in body:
            yield change(piece)

    async def read(body: AsyncIterator[bytes], signal: Any) -> AsyncIterator[str]:
        async for data in transport.read_sse_data(changed(body), signal):
            yield data

    return staticmethod(read)


def _decoding_each_piece_alone(piece: bytes) -> bytes:
    return piece.decode("utf-8", "replace").encode("utf-8")


def _keeping_carriage_returns(piece: bytes) -> bytes:
    # One more "\r" before each "\r\n": after the reader strips one, lines still end in "\r".
    return piece.replace(b"\r\n", b"\r\r\n")


def _usage_ignored_without_choices(value: Any) -> ParsedPayload:
    parsed = parse_payload(value)
    if value.get("choices") == []:
        parsed.usage = None  # the trailing usage payload is dropped
    return parsed


def _error_payload_accepted(value: Any) -> ParsedPayload:
    if isinstance(value, dict):
        value = {key: item for key, item in value.items() if key != "error"}
    return parse_payload(value)


def _finish_changes_accepted(base_url: str, api_key: str, fetch: Any = None) -> Any:
    created = transport.OpenAICompatibleTransport(base_url, api_key, fetch)
    first: list[str] = []

    def parse(value: Any) -> ParsedPayload:
        parsed = parse_payload(value)
        if parsed.finish_reason is not None:
            first.append(parsed.finish_reason)
            parsed.finish_reason = first[0]
        return parsed

    created.parse = parse
    return created


def _not_redacting(error: Exception, api_key: str) -> Exception:
    return transport.sanitized(error, "")


def _abort_as_ordinary_error(error: Exception, api_key: str) -> Exception:
    return RuntimeError(str(error).replace(api_key, "[redacted]") or "OpenAI-compatible transport failed")


def _variant(name: str, clause: str, lab: str, case: str, fragment: str, **overrides: Any) -> ProviderVariant:
    return ProviderVariant(name, reference_binding(**overrides), clause, lab, case, fragment)


PROVIDER_VARIANTS: list[ProviderVariant] = [
    _variant(
        "system-kept-in-place",
        "PROV-MSG-1",
        "5.1",
        "prov-msg-course-system-fold",
        "value",
        to_provider_messages=_messages_with_system_in_place,
    ),
    _variant(
        "user-text-skips-empty-blocks",
        "PROV-MSG-2",
        "5.1",
        "prov-msg-empty-text-blocks-count",
        "value",
        to_provider_messages=_user_text_without_empty_blocks,
    ),
    _variant(
        "empty-assistant-text-not-null",
        "PROV-MSG-3",
        "5.1",
        "prov-msg-assistant-null-only-without-text",
        "value",
        to_provider_messages=lambda context: _messages_rewriting(context, _empty_text_not_null),
    ),
    _variant(
        "raw-arguments-ignored",
        "PROV-MSG-4",
        "5.1",
        "prov-msg-course-roles",
        "arguments",
        to_provider_messages=_messages_ignoring_raw_arguments,
    ),
    _variant(
        "tool-entry-keeps-is-error",
        "PROV-MSG-5",
        "5.1",
        "prov-msg-tool-result-drops-is-error-and-details",
        "isError",
        to_provider_messages=_tool_result_with_is_error,
    ),
    _variant(
        "tools-empty-list-kept",
        "PROV-TOOLS-1",
        "5.1",
        "prov-tools-empty-list-is-undefined",
        "value",
        to_provider_tools=_tools_keeping_empty_list,
    ),
    _variant(
        "content-index-is-chunk-index",
        "PROV-MODEL-3",
        "5.2",
        "prov-model-course-first-appearance",
        "contentIndex",
        create_openai_compatible_model=_model_with(_ChunkIndexAsContentIndex),
    ),
    _variant(
        "partials-share-the-text-block",
        "PROV-MODEL-5",
        "5.2",
        "prov-model-course-first-appearance",
        "partial",
        create_openai_compatible_model=_model_with(_TextMutatedInPlace),
    ),
    _variant(
        "arguments-parsed-for-every-reason",
        "PROV-MODEL-7",
        "5.2",
        "prov-model-stop-keeps-arguments-raw",
        "arguments",
        create_openai_compatible_model=_model_with(_ParsingEveryReason),
    ),
    _variant(
        "broken-json-named-by-content-index",
        "PROV-MODEL-8",
        "5.2",
        "prov-model-broken-json-unnamed-uses-index",
        "errorMessage",
        create_openai_compatible_model=_model_with(_BrokenJsonNamedByContentIndex),
    ),
    _variant(
        "total-tokens-not-summed",
        "PROV-MODEL-9",
        "5.2",
        "prov-model-usage-total-defaults-to-sum",
        "totalTokens",
        create_openai_compatible_model=_model_over(_total_not_summed),
    ),
    _variant(
        "missing-finish-is-stop",
        "PROV-MODEL-10",
        "5.2",
        "prov-model-course-missing-finish",
        "events",
        create_openai_compatible_model=_model_over(_missing_finish_is_stop),
    ),
    _variant(
        "error-drops-partial",
        "PROV-MODEL-11",
        "5.2",
        "prov-model-course-transport-throws",
        "content",
        create_openai_compatible_model=_model_with(_ErrorWithoutPartial),
    ),
    _variant(
        "abort-not-checked-per-chunk",
        "PROV-MODEL-12",
        "5.2",
        "prov-model-course-abort-mid-stream",
        "events",
        create_openai_compatible_model=lambda provider, model, transport: _ModelNotCheckingAbort(provider, model, transport),
    ),
    _variant(
        "trailing-slash-kept",
        "PROV-HTTP-1",
        "5.3",
        "prov-http-course-request",
        "url",
        create_openai_compatible_transport=_keeping_trailing_slash,
    ),
    _variant(
        "api-key-in-body",
        "PROV-HTTP-2",
        "5.3",
        "prov-http-course-request",
        "apiKey",
        create_openai_compatible_transport=_transport_with(_init=_init_with_key_in_body),
    ),
    _variant(
        "status-not-checked", "PROV-HTTP-3", "5.3", "prov-http-status-not-ok", "chunks", create_openai_compatible_transport=_ignoring_status
    ),
    _variant(
        "decoder-per-piece",
        "PROV-SSE-1",
        "5.3",
        "prov-sse-utf8-split-inside-characters",
        "delta",
        create_openai_compatible_transport=_transport_with(read_events=_events_over(_decoding_each_piece_alone)),
    ),
    _variant(
        "carriage-returns-kept",
        "PROV-SSE-1",
        "5.3",
        "prov-sse-crlf-comments-and-multiline-data",
        "chunks",
        create_openai_compatible_transport=_transport_with(read_events=_events_over(_keeping_carriage_returns)),
    ),
    _variant(
        "error-payload-accepted",
        "PROV-SSE-2",
        "5.3",
        "prov-sse-error-payload",
        "error",
        create_openai_compatible_transport=_transport_with(parse=staticmethod(_error_payload_accepted)),
    ),
    _variant(
        "usage-ignored-without-choices",
        "PROV-SSE-3",
        "5.3",
        "prov-sse-course-interleaved-tools-and-usage",
        "usage",
        create_openai_compatible_transport=_transport_with(parse=staticmethod(_usage_ignored_without_choices)),
    ),
    _variant(
        "finish-change-accepted",
        "PROV-SSE-4",
        "5.3",
        "prov-sse-finish-reason-changed",
        "chunks",
        create_openai_compatible_transport=_finish_changes_accepted,
    ),
    _variant(
        "abort-reported-as-ordinary-error",
        "PROV-SSE-5",
        "5.3",
        "prov-sse-course-abort-mid-stream",
        "abort_error",
        create_openai_compatible_transport=_transport_with(sanitize=staticmethod(_abort_as_ordinary_error)),
    ),
    _variant(
        "key-not-redacted",
        "PROV-KEY-1",
        "5.3",
        "prov-key-course-fetch-error-redacted",
        "never-print-this-secret",
        create_openai_compatible_transport=_transport_with(sanitize=staticmethod(_not_redacting)),
    ),
]
