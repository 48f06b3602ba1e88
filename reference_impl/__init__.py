"""Python reference implementation of the pi-conformance spec (chapters 03 and 04).

The message IR and its constructors, text projection and system replay, the event
streams, ``ScriptedModel`` with its abort signal, and ``json_text``.
"""

from .abort import AbortController, AbortSignal
from .event_stream import AssistantMessageEventStream, EventStream
from .ir import assistant_message, text, user_message
from .json_text import json_text
from .projection import (
    current_system_message,
    current_system_prompt,
    system_message_text,
    text_of,
)
from .scripted_model import ScriptedModel

__all__ = [
    "AbortController",
    "AbortSignal",
    "AssistantMessageEventStream",
    "EventStream",
    "ScriptedModel",
    "assistant_message",
    "current_system_message",
    "current_system_prompt",
    "json_text",
    "system_message_text",
    "text",
    "text_of",
    "user_message",
]
