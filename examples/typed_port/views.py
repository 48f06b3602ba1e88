"""Read-only views of messages, system replay, and the message constructors."""

from __future__ import annotations

import time
from typing import Any

from .messages import AssistantMsg, Message, SystemMsg, Text, ToolCall, Usage, UserMsg


def message_text(message: Message) -> str:
    """The text blocks' texts joined with a newline; a system message's full text."""
    if isinstance(message, SystemMsg):
        return system_text(message)
    return "\n".join(block.text for block in message.content if isinstance(block, Text))


def system_text(message: SystemMsg) -> str:
    """The content and each kept section, non-empty ones separated by a blank line."""
    parts = [message.content, *(value for value in (message.sections or {}).values() if value is not None)]
    return "\n\n".join(part for part in parts if part)


def replay_system(messages: list[Message]) -> SystemMsg | None:
    """All system messages of a transcript folded into one; None when there is none."""
    contents: list[str] = []
    sections: dict[str, str | None] = {}
    first: SystemMsg | None = None
    for message in messages:
        if not isinstance(message, SystemMsg):
            continue
        first = first or message
        if message.content:
            contents.append(message.content)
        for name, value in (message.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    if first is None:
        return None
    return SystemMsg("\n\n".join(contents), first.timestamp, sections or None)


def system_prompt(messages: list[Message]) -> str | None:
    replayed = replay_system(messages)
    return None if replayed is None else system_text(replayed)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def make_text(value: str) -> Text:
    return Text(value)


def make_user(value: str) -> UserMsg:
    return UserMsg([Text(value)], now_ms())


def make_assistant(
    content: list[Text | ToolCall],
    stop_reason: str = "stop",
    *,
    provider: str = "scripted",
    model: str = "scripted-v1",
    usage: Usage | None = None,
    error_message: str | None = None,
    timestamp: float | None = None,
) -> AssistantMsg:
    """An assistant message; keyword arguments replace the defaults."""
    return AssistantMsg(
        list(content), provider, model, usage or Usage(0, 0, 0), stop_reason, now_ms() if timestamp is None else timestamp, error_message
    )


def options_from(overrides: dict[str, Any]) -> dict[str, Any]:
    """make_assistant's keyword arguments for the IR's camelCase overrides (unknown keys ignored)."""
    names = {"provider": "provider", "model": "model", "errorMessage": "error_message", "timestamp": "timestamp"}
    options = {names[key]: value for key, value in overrides.items() if key in names}
    if "usage" in overrides:
        options["usage"] = Usage(overrides["usage"]["input"], overrides["usage"]["output"], overrides["usage"]["totalTokens"])
    return options
