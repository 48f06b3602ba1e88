"""Python reference implementation of the pi-conformance spec (chapters 03 to 07 and 09).

The message IR and its constructors, text projection and system replay, the event
streams, ``ScriptedModel`` with its abort signal, ``json_text``, the tool contract
(validators, ``object_schema``, ``ToolRegistry``, ``execute_tool_call``), the provider
adapter (``to_provider_messages``, ``to_provider_tools``, the model over a transport, the
OpenAI-compatible SSE transport), the agent loop (``run_agent_loop``) and the stateful
agent: its pure ``reduce_agent_state`` and the ``Agent``.
"""

from .abort import AbortController, AbortSignal
from .agent import Agent
from .agent_loop import run_agent_loop
from .agent_state import reduce_agent_state
from .event_stream import AssistantMessageEventStream, EventStream
from .ir import assistant_message, text, user_message
from .json_text import json_text
from .projection import (
    current_system_message,
    current_system_prompt,
    system_message_text,
    text_of,
)
from .provider_adapter import AbortError, create_openai_compatible_model, fixed_transport, to_provider_messages, to_provider_tools
from .provider_transport import create_openai_compatible_transport
from .scripted_model import ScriptedModel
from .tool import ToolRegistry, execute_tool_call, object_schema, optional_positive_integer, optional_string, string_value

__all__ = [
    "AbortController",
    "AbortError",
    "AbortSignal",
    "Agent",
    "AssistantMessageEventStream",
    "EventStream",
    "ScriptedModel",
    "ToolRegistry",
    "assistant_message",
    "create_openai_compatible_model",
    "create_openai_compatible_transport",
    "current_system_message",
    "current_system_prompt",
    "execute_tool_call",
    "fixed_transport",
    "json_text",
    "object_schema",
    "optional_positive_integer",
    "optional_string",
    "reduce_agent_state",
    "run_agent_loop",
    "string_value",
    "system_message_text",
    "text",
    "text_of",
    "to_provider_messages",
    "to_provider_tools",
    "user_message",
]
