"""Text projections of content and system messages (spec/pi-ai-1/spec.md, section 1: PA-TEXT, PA-SYSTEXT, PA-UPDATE)."""

from __future__ import annotations

from typing import Any

from .js_text import js_object


def content_text(content: str | list[dict[str, Any]], separator: str = "\n") -> str:
    """A string content as is; else the text of every text block, in order, joined with ``separator``."""
    if isinstance(content, str):
        return content
    return separator.join(block["text"] for block in content if block.get("type") == "text")


def get_system_message_text(message: dict[str, Any]) -> str:
    """The content's text, then each section that is not None, the empty ones left out, joined with a blank line."""
    parts = [content_text(message["content"])]
    # Sections are a JavaScript object: integer-like names come first (PA-KEYS-1).
    parts += [text for text in js_object(message.get("sections") or {}).values() if text is not None]
    return "\n\n".join(part for part in parts if part)


def render_system_message_update(message: dict[str, Any]) -> str:
    """A later system message as text: its content, then what each section change did (tool changes are not rendered)."""
    parts = [text] if (text := content_text(message["content"])) else []
    for name, value in js_object(message.get("sections") or {}).items():
        parts.append(f'Removed system prompt section "{name}".' if value is None else f'Updated system prompt section "{name}":\n\n{value}')
    return "\n\n".join(parts)
