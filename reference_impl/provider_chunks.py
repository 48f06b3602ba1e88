"""Validation of one OpenAI-compatible streaming payload into normalized chunks (PROV-SSE-2, PROV-SSE-3).

The payload is external JSON: nothing of it is trusted until it passed the checks here, each
of which fails with ``Invalid provider chunk: DETAIL``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1
FINISH_REASONS = ("stop", "length", "tool_calls")


class InvalidProviderChunk(ValueError):
    """A payload that is not of the shape the transport accepts."""

    def __init__(self, detail: str) -> None:
        """The error ``Invalid provider chunk: DETAIL``."""
        super().__init__(f"Invalid provider chunk: {detail}")


@dataclass
class ParsedPayload:
    """What one payload carries: text and tool chunks, a finish reason, usage."""

    chunks: list[dict[str, Any]]
    finish_reason: str | None
    usage: dict[str, Any] | None


def parse_json(text: str) -> Any:
    """``JSON.parse``: like ``json.loads``, except that NaN and the infinities are not JSON."""
    return json.loads(text, parse_constant=_not_json)


def _not_json(constant: str) -> Any:
    raise ValueError(constant)


def _is_count(value: Any) -> bool:
    """A non-negative safe integer, as JavaScript sees numbers (``2.0`` is the integer 2)."""
    number = not isinstance(value, bool) and isinstance(value, int | float)
    return number and float(value).is_integer() and 0 <= value <= MAX_SAFE_INTEGER


def _optional_string(record: dict[str, Any], key: str, path: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidProviderChunk(f"{path}.{key} must be a string")
    return value


def _optional_count(record: dict[str, Any], key: str, path: str) -> int | None:
    value = record.get(key)
    if value is None:
        return None
    if not _is_count(value):
        raise InvalidProviderChunk(f"{path}.{key} must be a non-negative integer")
    return int(value)


def parse_usage(value: Any) -> dict[str, Any] | None:
    """``prompt_tokens``, ``completion_tokens``, ``total_tokens`` as ``input``, ``output``, ``totalTokens``."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidProviderChunk("usage must be an object")
    names = {"input": "prompt_tokens", "output": "completion_tokens", "totalTokens": "total_tokens"}
    counts = {name: _optional_count(value, wire, "usage") for name, wire in names.items()}
    return {name: count for name, count in counts.items() if count is not None}


def parse_finish_reason(value: Any) -> str | None:
    """The finish reason, or None; any other value than the three known ones is rejected."""
    if value is None or value in FINISH_REASONS:
        return value  # type: ignore[no-any-return]
    raise InvalidProviderChunk("finish_reason is not supported")


def parse_tool_chunk(value: Any, path: str) -> dict[str, Any]:
    """One ``tool_calls`` entry as a tool chunk ``{type: "tool", index, id?, name?, argumentsDelta?}``."""
    if not isinstance(value, dict):
        raise InvalidProviderChunk(f"{path} must be an object")
    if not _is_count(value.get("index")):
        raise InvalidProviderChunk(f"{path}.index must be a non-negative integer")
    if value.get("type") is not None and value.get("type") != "function":
        raise InvalidProviderChunk(f"{path}.type must be function")
    call_id = _optional_string(value, "id", path)
    name = arguments = None
    function = value.get("function")
    if function is not None:
        if not isinstance(function, dict):
            raise InvalidProviderChunk(f"{path}.function must be an object")
        name = _optional_string(function, "name", f"{path}.function")
        arguments = _optional_string(function, "arguments", f"{path}.function")
    if call_id is None and name is None and arguments is None:
        raise InvalidProviderChunk(f"{path} has no tool-call delta")
    chunk: dict[str, Any] = {"type": "tool", "index": int(value["index"])}
    for key, item in (("id", call_id), ("name", name), ("argumentsDelta", arguments)):
        if item is not None:
            chunk[key] = item
    return chunk


def _delta_chunks(delta: dict[str, Any]) -> list[dict[str, Any]]:
    chunks: list[dict[str, Any]] = []
    content = delta.get("content")
    if content is not None:
        if not isinstance(content, str):
            raise InvalidProviderChunk("choices[0].delta.content must be a string")
        if content:
            chunks.append({"type": "text", "delta": content})
    calls = delta.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise InvalidProviderChunk("choices[0].delta.tool_calls must be an array")
        chunks.extend(parse_tool_chunk(call, f"choices[0].delta.tool_calls[{index}]") for index, call in enumerate(calls))
    return chunks


def parse_payload(value: Any) -> ParsedPayload:
    """Validate one payload; its chunks, finish reason and usage."""
    if not isinstance(value, dict):
        raise InvalidProviderChunk("payload must be an object")
    if "error" in value:
        raise InvalidProviderChunk("provider returned an error payload")
    choices = value.get("choices")
    if not isinstance(choices, list):
        raise InvalidProviderChunk("choices must be an array")
    if len(choices) > 1:
        raise InvalidProviderChunk("only one streamed choice is supported")
    usage = parse_usage(value.get("usage"))
    if not choices:
        if usage is None:
            raise InvalidProviderChunk("empty choices require usage")
        return ParsedPayload([], None, usage)
    choice = choices[0]
    if not isinstance(choice, dict):
        raise InvalidProviderChunk("choices[0] must be an object")
    if "index" in choice and not _is_count(choice["index"]):
        raise InvalidProviderChunk("choices[0].index must be a non-negative integer")
    if not isinstance(choice.get("delta"), dict):
        raise InvalidProviderChunk("choices[0].delta must be an object")
    chunks = _delta_chunks(choice["delta"])
    return ParsedPayload(chunks, parse_finish_reason(choice.get("finish_reason")), usage)
