"""pi_ai_port: a small Python port of upstream pi-ai 1.x (``@earendil-works/pi-ai``), profile ``pi-ai-1``.

Written from spec/pi-ai-1/spec.md (and the package's ``dist/`` where the spec is silent). IR
values are plain dicts with the IR's own field names; the names below are the ones
``conformance.adapters.pi_ai_binding`` looks for, so this package is its own binding:

    PYTHONPATH=examples pi-conformance run --profile pi-ai-1 --impl python:pi_ai_port.conformance:ADAPTER
"""

from .event_stream import AssistantMessageEventStream, EventStream
from .faux import (
    AbortController,
    FauxProvider,
    faux_assistant_message,
    faux_provider,
    faux_text,
    faux_thinking,
    faux_tool_call,
)
from .text import content_text, get_system_message_text, render_system_message_update
from .transcript import get_current_system_message, get_current_system_prompt, get_current_tools, normalize_context

__all__ = [
    "AbortController",
    "AssistantMessageEventStream",
    "EventStream",
    "FauxProvider",
    "content_text",
    "faux_assistant_message",
    "faux_provider",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_current_tools",
    "get_system_message_text",
    "normalize_context",
    "render_system_message_update",
]
