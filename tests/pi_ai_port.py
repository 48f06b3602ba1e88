"""A small Python port of upstream pi-ai's text and system-replay helpers, to check the pi-ai-1 binding.

Written from spec/pi-ai-1/spec.md, sections 1 and 2. It binds no event streams or faux
provider, so those cases are skipped.
"""

from __future__ import annotations

import sys
from typing import Any

from conformance.adapters.pi_ai_binding import PiAiBindingAdapter


def content_text(content: Any, separator: str = "\n") -> str:
    if isinstance(content, str):
        return content
    return separator.join(block["text"] for block in content if block.get("type") == "text")


def get_system_message_text(message: dict[str, Any]) -> str:
    parts = [content_text(message["content"])]
    parts += [text for text in (message.get("sections") or {}).values() if text is not None]
    return "\n\n".join(part for part in parts if part)


def render_system_message_update(message: dict[str, Any]) -> str:
    parts = [text] if (text := content_text(message["content"])) else []
    for name, value in (message.get("sections") or {}).items():
        parts.append(f'Removed system prompt section "{name}".' if value is None else f'Updated system prompt section "{name}":\n\n{value}')
    return "\n\n".join(parts)


def get_current_tools(messages: list[dict[str, Any]]) -> list[Any]:
    tools: dict[str, Any] = {}
    for message in messages:
        if message.get("role") != "system":
            continue
        for tool in message.get("toolsRemoved") or []:
            tools.pop(tool["name"], None)
        for tool in message.get("toolsAdded") or []:
            tools[tool["name"]] = tool  # a dict keeps a redefined name in its place
    return list(tools.values())


def get_current_system_message(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    content: list[str] = []
    sections: dict[str, str] = {}
    timestamp = None
    for message in messages:
        if message.get("role") != "system":
            continue
        timestamp = message["timestamp"] if timestamp is None else timestamp
        if text := content_text(message["content"]):
            content.append(text)
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    tools = get_current_tools(messages)
    if timestamp is None and not tools:
        return None
    result: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        result["sections"] = dict(sections)
    if tools:
        result["toolsAdded"] = tools
    result["timestamp"] = timestamp if timestamp is not None else 0
    return result


def get_current_system_prompt(messages: list[dict[str, Any]]) -> str:
    message = get_current_system_message(messages)
    return get_system_message_text(message) if message is not None else ""


def normalize_context(context: dict[str, Any]) -> dict[str, Any]:
    prompt, tools = context.get("systemPrompt"), context.get("tools")
    if not prompt and not tools:
        return {"messages": context["messages"]}
    head: dict[str, Any] = {"role": "system", "content": prompt or ""}
    if tools:
        head["toolsAdded"] = tools
    head["timestamp"] = 0
    return {"messages": [head, *context["messages"]]}


ADAPTER = PiAiBindingAdapter(sys.modules[__name__], name="pi-ai-python-port")
