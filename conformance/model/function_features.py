"""Per-function features of profile pi-ai-1: a port that lacks one upstream function opts out of it alone.

A pi-ai-1 case's ``features`` name its area first (``messages``, ``system-replay``,
``event-streams``, ``faux-provider``); the loader adds the upstream function the case calls,
kebab-cased (``getCurrentTools`` is ``get-current-tools``), taken from its operation (and
for ``faux_block`` / ``event_stream`` from the input's kind). ``--without-feature
get-current-tools``, or ``unclaimed_features`` in an adapter's handshake, then skips exactly
the cases of that function, and the rest of its area still counts.
"""

from __future__ import annotations

from typing import Final

from conformance.common.jsontypes import JsonValue
from conformance.model.agent_class_features import agent_class_features
from conformance.model.agent_features import agent_features

# operation -> function feature; None: decided by the input's kind (below).
_BY_OPERATION: Final[dict[str, str | None]] = {
    "content_text": "content-text",
    "system_message_text": "get-system-message-text",
    "render_system_message_update": "render-system-message-update",
    "current_system_message": "get-current-system-message",
    "current_system_prompt": "get-current-system-prompt",
    "current_tools": "get-current-tools",
    "normalize_context": "normalize-context",
    "faux_block": None,
    "faux_message": "faux-assistant-message",
    "event_stream": None,
    "faux_provider": "faux-provider",
}
_BY_KIND: Final[dict[tuple[str, str], str]] = {
    ("faux_block", "text"): "faux-text",
    ("faux_block", "thinking"): "faux-thinking",
    ("faux_block", "toolCall"): "faux-tool-call",
    ("event_stream", "generic"): "event-stream",
    ("event_stream", "assistant"): "assistant-message-event-stream",
}

#: Every pi-ai-1 function feature, in the order the spec introduces them.
PI_AI_1_FUNCTIONS: Final = tuple(
    dict.fromkeys(name for name in [*_BY_OPERATION.values(), *_BY_KIND.values()] if name is not None and name != "faux-provider")
)


def function_feature(operation: str, input_value: JsonValue) -> str | None:
    """The function feature of a pi-ai-1 case, or None (an unknown operation or kind; ``faux-provider`` is already its area)."""
    name = _BY_OPERATION.get(operation)
    if name is None and isinstance(input_value, dict):
        name = _BY_KIND.get((operation, str(input_value.get("kind"))))
    return None if name == "faux-provider" else name


def derived_features(profile: str, operation: str, input_value: JsonValue, expect: JsonValue) -> tuple[str, ...]:
    """The finer features a case of ``profile`` gets from itself: pi-ai-1's function, pi-agent-core-1's (agent_features.py)."""
    if profile == "pi-ai-1":
        function = function_feature(operation, input_value)
        return () if function is None else (function,)
    if profile == "pi-agent-core-1":
        return agent_class_features(input_value, expect) if operation == "agent" else agent_features(input_value, expect)
    return ()
