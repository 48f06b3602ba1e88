"""Python reference implementation of the pi-conformance spec (chapters 03, 04, 06 and 07).

The message IR and its constructors, text projection and system replay, the event
streams, ``ScriptedModel`` with its abort signal, ``json_text``, and the tool contract
(validators, ``object_schema``, ``ToolRegistry``, ``execute_tool_call``) and the agent loop
(``run_agent_loop``).
"""

from .abort import AbortController, AbortSignal
from .agent_loop import run_agent_loop
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
from .tool import ToolRegistry, execute_tool_call, object_schema, optional_positive_integer, optional_string, string_value

__all__ = [
    "AbortController",
    "AbortSignal",
    "AssistantMessageEventStream",
    "EventStream",
    "ScriptedModel",
    "ToolRegistry",
    "assistant_message",
    "current_system_message",
    "current_system_prompt",
    "execute_tool_call",
    "json_text",
    "object_schema",
    "optional_positive_integer",
    "optional_string",
    "run_agent_loop",
    "string_value",
    "system_message_text",
    "text",
    "text_of",
    "user_message",
]
