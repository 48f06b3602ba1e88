"""The OpenAI-compatible HTTP/SSE transport of chapter 05 (PROV-HTTP-*, PROV-SSE-*, PROV-KEY-1).

``fetch(url, init)`` is injected: an async callable taking the URL and ``{method, headers,
body, signal}`` and returning a response with ``status``, ``ok`` and ``body`` (an async
iterator of ``bytes``, or None). The API key goes into the ``Authorization`` header only;
every error that leaves the transport has it replaced by ``[redacted]``.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any
from urllib.parse import urlsplit

from .abort import AbortSignal
from .json_text import json_text
from .provider_adapter import ABORTED_MESSAGE, AbortError, is_abort_error
from .provider_chunks import InvalidProviderChunk, parse_json, parse_payload

#: ``fetch(url, init)``: what the transport posts through.
Fetch = Callable[[str, dict[str, Any]], Awaitable[Any]]


def _throw_if_aborted(signal: AbortSignal | None) -> None:
    if signal is not None and signal.aborted:
        raise AbortError(ABORTED_MESSAGE)


def sanitized(error: Exception, api_key: str) -> Exception:
    """What leaves the transport: an abort error as such, any other with the key redacted."""
    if is_abort_error(error):
        return AbortError(ABORTED_MESSAGE)
    message = str(error)
    if api_key:
        message = message.replace(api_key, "[redacted]")
    return RuntimeError(message or "OpenAI-compatible transport failed")


def chat_completions_endpoint(base_url: str) -> str:
    """``base_url`` without its trailing slashes, then ``/chat/completions``; it must be absolute."""
    endpoint = re.sub(r"/+$", "", base_url) + "/chat/completions"
    if not urlsplit(endpoint).scheme:
        raise ValueError("OpenAI-compatible baseUrl must be an absolute URL")
    return endpoint


def _data_of(line: str, data_lines: list[str]) -> str | None:
    """One SSE line: a blank line dispatches the pending data, ``data:`` lines add to it, others are ignored."""
    if line == "":
        if not data_lines:
            return None
        data = "\n".join(data_lines)
        data_lines.clear()
        return data
    if line == "data":
        data_lines.append("")
    elif line.startswith("data:"):
        value = line[5:]
        data_lines.append(value[1:] if value.startswith(" ") else value)
    return None


async def read_sse_data(body: AsyncIterator[bytes], signal: AbortSignal | None) -> AsyncGenerator[str, None]:
    """The data of each SSE event of ``body``, decoded as UTF-8 across chunk boundaries."""
    # utf-8-sig drops a leading byte-order mark, as TextDecoder does by default.
    decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
    data_lines: list[str] = []
    buffer = ""
    pieces = body.__aiter__()
    async with aclosing(pieces):  # type: ignore[type-var]
        while True:
            _throw_if_aborted(signal)
            try:
                piece, done = await pieces.__anext__(), False
            except StopAsyncIteration:
                piece, done = b"", True
            _throw_if_aborted(signal)
            buffer += decoder.decode(piece, final=done)
            while (end := buffer.find("\n")) >= 0:
                line, buffer = buffer[:end], buffer[end + 1 :]
                data = _data_of(line.removesuffix("\r"), data_lines)
                if data is not None:
                    yield data
            if done:
                break
        data = _data_of(buffer.removesuffix("\r"), data_lines) if buffer else None
        if data is not None:
            yield data
        if data_lines:
            yield "\n".join(data_lines)


class OpenAICompatibleTransport:
    """Streams chat completions from ``base_url`` with ``api_key``, through ``fetch``."""

    # The steps of a stream, as attributes so that one can be replaced alone (a variant in the tests).
    read_events = staticmethod(read_sse_data)
    parse = staticmethod(parse_payload)
    sanitize = staticmethod(sanitized)

    def __init__(self, base_url: str, api_key: str, fetch: Fetch) -> None:
        """Check the endpoint now; a relative ``base_url`` is an error here, not at the first request."""
        self._endpoint = chat_completions_endpoint(base_url)
        self._api_key = api_key
        self._fetch = fetch

    async def stream(self, request: dict[str, Any], signal: AbortSignal | None) -> AsyncGenerator[dict[str, Any], None]:
        """The normalized chunks of one request; every error comes out sanitized."""
        try:
            async with aclosing(self._chunks(request, signal)) as chunks:
                async for chunk in chunks:
                    yield chunk
        except Exception as error:
            raise self.sanitize(error, self._api_key) from None

    def _init(self, request: dict[str, Any], signal: AbortSignal | None) -> dict[str, Any]:
        """What ``fetch`` gets besides the URL: the key in the Authorization header only."""
        return {
            "method": "POST",
            "headers": {"Accept": "text/event-stream", "Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json"},
            "body": json_text({**request, "stream": True, "stream_options": {"include_usage": True}}),
            "signal": signal,
        }

    async def _open(self, request: dict[str, Any], signal: AbortSignal | None) -> Any:
        response = await self._fetch(self._endpoint, self._init(request, signal))
        _throw_if_aborted(signal)
        if not response.ok:
            raise RuntimeError(f"OpenAI-compatible request failed with HTTP {response.status}")
        if response.body is None:
            raise RuntimeError("OpenAI-compatible response has no body")
        return response.body

    async def _chunks(self, request: dict[str, Any], signal: AbortSignal | None) -> AsyncGenerator[dict[str, Any], None]:
        _throw_if_aborted(signal)
        body = await self._open(request, signal)
        finish: str | None = None
        usage: dict[str, Any] | None = None
        async for data in self.read_events(body, signal):
            _throw_if_aborted(signal)
            if data.strip() == "[DONE]":
                break
            try:
                payload = parse_json(data)
            except ValueError:
                raise InvalidProviderChunk("data line is not valid JSON") from None
            parsed = self.parse(payload)
            if finish is not None and parsed.chunks:
                raise InvalidProviderChunk("content arrived after finish_reason")
            if finish is not None and parsed.finish_reason is not None and parsed.finish_reason != finish:
                raise InvalidProviderChunk("finish_reason changed during the stream")
            for chunk in parsed.chunks:
                yield chunk
            finish = parsed.finish_reason or finish
            usage = usage if parsed.usage is None else {**(usage or {}), **parsed.usage}
        _throw_if_aborted(signal)
        if finish is not None:
            yield {"type": "finish", "reason": finish, **({} if usage is None else {"usage": usage})}


def create_openai_compatible_transport(base_url: str, api_key: str, fetch: Fetch) -> OpenAICompatibleTransport:
    """``createOpenAICompatibleTransport({baseUrl, apiKey, fetch})``."""
    return OpenAICompatibleTransport(base_url, api_key, fetch)
