"""Read-only text views of messages and the replay of system messages (chapter 03).

Every function here is pure: it builds new values and never changes its inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

from .ir import AgentMessage, SystemMessage


def text_of(message: AgentMessage) -> str:
    """Return the message's text: text blocks joined with ``"\\n"`` (IR-TEXT-1..3).

    Tool-call blocks contribute nothing; empty text blocks still contribute an
    entry. A system message gives ``system_message_text(message)``.
    """
    if message["role"] == "system":
        return system_message_text(message)
    return "\n".join(block["text"] for block in message["content"] if block["type"] == "text")


def system_message_text(message: SystemMessage) -> str:
    """Return the content and each section's text, non-empty ones joined by blank
    lines (SYS-TEXT-1)."""
    parts = [message["content"]]
    parts.extend(v for v in message.get("sections", {}).values() if v is not None)
    return "\n\n".join(part for part in parts if part)


def current_system_message(messages: Sequence[AgentMessage]) -> SystemMessage | None:
    """Replay the transcript's system messages into one (SYS-REPLAY-1..7).

    Contents are appended, sections set or deleted by name, and the timestamp is
    the first system message's. Returns ``None`` when there is no system message.
    """
    contents: list[str] = []
    # A dict is an insertion-ordered map: replacing a value keeps its position,
    # and a key deleted then set again moves to the end (SYS-REPLAY-4).
    sections: dict[str, str | None] = {}
    timestamp: int | float | None = None
    for message in messages:
        if message["role"] != "system":
            continue
        if timestamp is None:
            timestamp = message["timestamp"]
        if message["content"]:
            contents.append(message["content"])
        for name, value in message.get("sections", {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    if timestamp is None:
        return None
    result: SystemMessage = {
        "role": "system",
        "content": "\n\n".join(contents),
        "timestamp": timestamp,
    }
    if sections:
        result["sections"] = sections
    return result


def current_system_prompt(messages: Sequence[AgentMessage]) -> str | None:
    """Return the text of the replayed system message, or ``None`` when the
    transcript has none (SYS-PROMPT-1)."""
    message = current_system_message(messages)
    return None if message is None else system_message_text(message)
