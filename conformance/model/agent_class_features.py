"""Finer features of profile pi-agent-core-1's ``agent`` cases: a port opts out of one Agent method or mode alone.

An ``agent`` case's ``features`` name its area first (``agent``); the loader adds, from the
case itself (spec/pi-agent-core-1/spec.md, section 7):

- each Agent method the case calls besides ``prompt`` and ``subscribe``, in a step or a
  subscriber's action: ``agent-continue``, ``agent-steer``, ``agent-follow-up``,
  ``agent-wait-for-idle``, ``agent-reset``, ``agent-clear-queues``;
- ``queue-modes`` when the case sets a queue mode (in the Agent's options or a step): a
  port whose queues always drain one message at a time, or always all, drops those alone;
- ``listener-barrier`` when a subscriber awaits a gate (PAC-AGENT-10);
- ``queue-peek`` when it expects what ``peekQueuedMessages()`` returns (every ``queues`` view);
- ``tool-declarations`` when the Agent is given a system prompt or tools, which 1.x writes into
  the transcript as its leading system message (PAC-AGENT-1) where the 0.85-era API keeps them
  apart;
- the Agent options it passes that the loop cases already name (``tool-execution``,
  ``before-tool-call``, ``after-tool-call``), and ``thinking-level`` / ``duration-ms`` when it
  expects them, as :mod:`.agent_features` does for ``agent_loop``.

It imports only :mod:`.agent_features`, a leaf.
"""

from __future__ import annotations

import json
from typing import Any, Final

from conformance.model.agent_features import expected_behaviours

_METHODS: Final = {
    "continue": "agent-continue",
    "steer": "agent-steer",
    "follow_up": "agent-follow-up",
    "wait_for_idle": "agent-wait-for-idle",
    "reset": "agent-reset",
    "clear_steering_queue": "agent-clear-queues",
    "clear_follow_up_queue": "agent-clear-queues",
    "clear_all_queues": "agent-clear-queues",
    "steering_mode": "queue-modes",
    "follow_up_mode": "queue-modes",
}
_OPTIONS: Final = {
    "steering_mode": "queue-modes",
    "follow_up_mode": "queue-modes",
    "tool_execution": "tool-execution",
    "before_tool_call": "before-tool-call",
    "after_tool_call": "after-tool-call",
}

#: The finer features only ``agent`` cases get (the others are agent_features.py's), in the spec's order.
AGENT_CLASS_FUNCTIONS: Final = (*dict.fromkeys(_METHODS.values()), "listener-barrier", "queue-peek")


def _names(action: Any) -> list[str]:
    if isinstance(action, str):
        return [action]
    return list(action) if isinstance(action, dict) and len(action) == 1 else []


def agent_class_features(input_value: Any, expect: Any) -> tuple[str, ...]:
    """The finer features of an ``agent`` case with this ``input`` and ``expect``."""
    if not isinstance(input_value, dict):
        return ()
    given = input_value.get("agent")
    settings: dict[str, Any] = given if isinstance(given, dict) else {}
    found = [name for key, name in _OPTIONS.items() if key in settings]
    actions: list[Any] = list(input_value.get("steps") or [])
    for subscriber in input_value.get("subscribers") or []:
        for rule in (subscriber.get("rules") or []) if isinstance(subscriber, dict) else []:
            actions += list(rule.get("do") or []) if isinstance(rule, dict) else []
    for action in actions:
        for name in _names(action):
            if name in _METHODS:
                found.append(_METHODS[name])
            elif name == "wait":
                found.append("listener-barrier")
    if settings.get("system_prompt") or input_value.get("tools"):
        found.append("tool-declarations")  # the Agent's transcript opens with a system message (PAC-AGENT-1)
    if '"peek"' in json.dumps(expect):
        found.append("queue-peek")
    return tuple(dict.fromkeys([*found, *expected_behaviours(expect)]))
