"""System replay over a transcript (spec/pi-ai-1/spec.md, section 2: PA-REPLAY, PA-PROMPT, PA-NORM)."""

from __future__ import annotations

from typing import Any

from .js_text import js_object
from .text import content_text, get_system_message_text


def get_current_tools(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools the system messages leave, by name: removals first, then additions, message by message."""
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
    """The system messages replayed into one new message; None when there is none."""
    content: list[str] = []
    sections: dict[str, str] = {}
    timestamp = None
    for message in messages:
        if message.get("role") != "system":
            continue
        timestamp = message["timestamp"] if timestamp is None else timestamp
        if text := content_text(message["content"]):
            content.append(text)
        for name, value in js_object(message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    tools = get_current_tools(messages)
    if timestamp is None and not tools:
        return None
    result: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        # Replay keeps insertion order (a Map); the result is an object, integer-like names first (PA-KEYS-1).
        result["sections"] = js_object(sections)
    if tools:
        result["toolsAdded"] = tools
    result["timestamp"] = timestamp if timestamp is not None else 0
    return result


def get_current_system_prompt(messages: list[dict[str, Any]]) -> str:
    """The replayed system message's text; "" when there is none."""
    message = get_current_system_message(messages)
    return get_system_message_text(message) if message is not None else ""


def normalize_context(context: dict[str, Any]) -> dict[str, Any]:
    """``{messages}``, led by a system message made of ``systemPrompt`` and ``tools`` when either is non-empty."""
    prompt, tools = context.get("systemPrompt"), context.get("tools")
    if not prompt and not tools:
        return {"messages": context["messages"]}
    head: dict[str, Any] = {"role": "system", "content": prompt or ""}
    if tools:
        head["toolsAdded"] = tools
    head["timestamp"] = 0
    return {"messages": [head, *context["messages"]]}
