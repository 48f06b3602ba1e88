"""Finer features of profile pi-agent-core-1: a port opts out of one function, or one 1.x behaviour, alone.

A pi-agent-core-1 case's ``features`` name its area first (``loop``, ``tools``, ``hooks``,
``queues``, ``abort``); the loader adds, from the case itself:

- the entry point it calls, kebab-cased (``runAgentLoop`` is ``run-agent-loop``), and each
  config function or option it scripts (``before-tool-call``, ``after-tool-call``,
  ``get-steering-messages``, ``get-follow-up-messages``, ``tool-execution``,
  ``prepare-request``, ``finish-turn``, ``prepare-next-turn``, ``transform-context``, and
  ``execution-mode`` for a tool that sets it): a port without ``getFollowUpMessages`` drops
  exactly those cases;
- the 1.x behaviours that ports of the 0.85-era API lack as a whole (docs/porting.md, "Ports
  of the 0.85-era API"): ``tool-declarations`` (the loop declares ``context.tools`` in the
  transcript, PAC-DECL-1: every case whose tools the transcript does not already declare),
  ``duration-ms`` (results and their events carry ``durationMs``: every case that expects
  one), ``thinking-level`` (the final assistant message carries ``thinkingLevel``, PAC-LOOP-3:
  every case that expects one) and ``truncated-calls`` (the calls of a ``length`` turn are
  failed, PAC-TOOL-7).

This module is a leaf: it imports nothing from the rest of the package.
"""

from __future__ import annotations

import json
from typing import Any, Final

_ENTRIES: Final = {
    "runAgentLoop": "run-agent-loop",
    "agentLoop": "agent-loop",
    "runAgentLoopContinue": "run-agent-loop-continue",
    "agentLoopContinue": "agent-loop-continue",
}
_CONFIG: Final = {
    "before_tool_call": "before-tool-call",
    "after_tool_call": "after-tool-call",
    "steering": "get-steering-messages",
    "follow_up": "get-follow-up-messages",
    "tool_execution": "tool-execution",
    "prepare_request": "prepare-request",
    "finish_turn": "finish-turn",
    "prepare_next_turn": "prepare-next-turn",
    "transform_context": "transform-context",
}
_BEHAVIOURS: Final = ("tool-declarations", "duration-ms", "thinking-level", "truncated-calls")

#: Every pi-agent-core-1 finer feature, in the order the spec introduces them.
PI_AGENT_CORE_1_FUNCTIONS: Final = (*_ENTRIES.values(), *_CONFIG.values(), "execution-mode", *_BEHAVIOURS)


def agent_features(input_value: Any, expect: Any) -> tuple[str, ...]:
    """The finer features of a pi-agent-core-1 case with this ``input`` and ``expect``."""
    if not isinstance(input_value, dict):
        return ()
    found = [_ENTRIES.get(str(input_value.get("entry", "runAgentLoop")), "")]
    config = _mapping(input_value.get("config"))
    found += [name for key, name in _CONFIG.items() if key in config]
    tools = [tool for tool in input_value.get("tools") or [] if isinstance(tool, dict)]
    if any("execution_mode" in tool for tool in tools):
        found.append("execution-mode")
    if _declares_tools(input_value, tools):
        found.append("tool-declarations")
    found += expected_behaviours(expect)
    if _has_truncated_calls(input_value):
        found.append("truncated-calls")
    return tuple(name for name in found if name)


def expected_behaviours(expect: Any) -> list[str]:
    """``duration-ms`` and ``thinking-level`` when the case expects a ``durationMs`` or a ``thinkingLevel`` somewhere."""
    expected = json.dumps(expect)
    return [name for key, name in (("durationMs", "duration-ms"), ("thinkingLevel", "thinking-level")) if f'"{key}"' in expected]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _declaration(tool: dict[str, Any]) -> str:
    """A tool as the model is told of it (upstream ``toToolDeclaration``), as comparable text."""
    name = tool.get("name")
    parameters = tool.get("parameters", {"type": "object", "properties": {}})
    return json.dumps({"name": name, "description": tool.get("description", name), "parameters": parameters})


def _declares_tools(input_value: dict[str, Any], tools: list[dict[str, Any]]) -> bool:
    """Whether the loop writes a tool declaration: a prompt system message to patch, or tools the transcript lacks."""
    prompts = [message for message in input_value.get("prompts") or [] if isinstance(message, dict)]
    if any(message.get("role") == "system" for message in prompts):
        return True
    context = _mapping(input_value.get("context"))
    declared: dict[str, str] = {}
    for message in context.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "system":
            for tool in message.get("toolsRemoved") or []:
                declared.pop(str(tool.get("name")), None)
            for tool in message.get("toolsAdded") or []:
                declared[str(tool.get("name"))] = _declaration(tool)
    return declared != {str(tool.get("name")): _declaration(tool) for tool in tools}


def _has_truncated_calls(input_value: dict[str, Any]) -> bool:
    model = _mapping(input_value.get("model"))
    for turn in model.get("turns") or []:
        message = turn.get("message") if isinstance(turn, dict) else None
        if isinstance(message, dict) and message.get("stopReason") == "length":
            if any(isinstance(block, dict) and block.get("type") == "toolCall" for block in message.get("content") or []):
                return True
    return False
