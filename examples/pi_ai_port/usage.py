"""The faux provider's token estimate (spec/pi-ai-1/spec.md, PA-FAUX-USAGE-1; porting.md, "Token estimates").

The prompt is one entry ``ROLE:TEXT`` per context message; the estimate counts UTF-16 code
units and divides by four. With a ``sessionId`` the provider simulates a prompt cache: what the
previous prompt of the session shares with this one is read from it, the rest written to it.
"""

from __future__ import annotations

import math
from typing import Any

from .js_text import stringify, utf16_common_prefix_length, utf16_length
from .text import get_system_message_text


def zero_usage() -> dict[str, Any]:
    """A usage of zeros (PA-USAGE-1)."""
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": zero_cost()}


def zero_cost() -> dict[str, int]:
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def estimate_tokens(text: str) -> int:
    return math.ceil(utf16_length(text) / 4)


def assistant_content_to_text(content: list[dict[str, Any]]) -> str:
    """Each block's text, thinking, or ``NAME:JSON`` of a tool call, joined with a newline."""
    return "\n".join(_assistant_block_text(block) for block in content)


def _assistant_block_text(block: dict[str, Any]) -> str:
    if block["type"] == "text":
        return str(block["text"])
    if block["type"] == "thinking":
        return str(block["thinking"])
    return f"{block['name']}:{stringify(block['arguments'])}"


def _content_to_text(content: str | list[dict[str, Any]]) -> str:
    # An image is written with the length of its base64 data (ASCII: code points are UTF-16 units).
    if isinstance(content, str):
        return content
    return "\n".join(block["text"] if block["type"] == "text" else f"[image:{block['mimeType']}:{len(block['data'])}]" for block in content)


def message_to_text(message: dict[str, Any]) -> str:
    """The TEXT of one prompt entry."""
    role = message["role"]
    if role == "system":
        parts = [get_system_message_text(message)]
        parts += [f"tool-:{stringify(tool)}" for tool in message.get("toolsRemoved") or []]
        parts += [f"tool+:{stringify(tool)}" for tool in message.get("toolsAdded") or []]
        return "\n".join(part for part in parts if part)
    if role == "user":
        return _content_to_text(message["content"])
    if role == "assistant":
        return assistant_content_to_text(message["content"])
    return "\n".join([message["toolName"], *(_content_to_text([block]) for block in message["content"])])


def with_usage_estimate(
    message: dict[str, Any], context: dict[str, Any], options: dict[str, Any], prompt_cache: dict[str, str]
) -> dict[str, Any]:
    """A copy of ``message`` whose usage is estimated from the context and the message's own content."""
    prompt = "\n\n".join(f"{entry['role']}:{message_to_text(entry)}" for entry in context["messages"])
    prompt_tokens = estimate_tokens(prompt)
    output = estimate_tokens(assistant_content_to_text(message["content"]))
    input_tokens, cache_read, cache_write = prompt_tokens, 0, 0
    session = options.get("sessionId")
    if session and options.get("cacheRetention") != "none":
        previous = prompt_cache.get(session)
        if previous is not None:
            cache_read = math.ceil(utf16_common_prefix_length(previous, prompt) / 4)
            cache_write = max(0, prompt_tokens - cache_read)
        else:
            cache_write = prompt_tokens
        input_tokens = 0  # every prompt token is either read from or written to the cache
        prompt_cache[session] = prompt
    usage = {
        "input": input_tokens,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input_tokens + output + cache_read + cache_write,
        "cost": zero_cost(),
    }
    return {**message, "usage": usage}
