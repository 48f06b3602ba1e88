"""The turn and request functions a pi-agent-core-1 case scripts: prepareRequest, finishTurn, prepareNextTurn, transformContext.

The Python counterpart of ``scriptedTurnFunction`` in ``node/agent_scenario.mjs``
(spec/fixture-format.md, "Agent scenarios"): call by call, the next scripted answer, each call
recorded in ``turn_functions`` in the compact form both adapters share (messages by role, ``after``:
the last event before the call).
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

from conformance.adapters.interface import HarnessError
from conformance.adapters.loop_scripts import ScriptedError
from conformance.adapters.pi_agent_core_scripts import AgentWorld, read, trace_line
from conformance.common.jsontypes import JsonObject, JsonValue

#: The scripted turn functions: a case's config key is also the function's name in a binding's config.
TURN_FUNCTIONS: tuple[str, ...] = ("prepare_request", "finish_turn", "prepare_next_turn", "transform_context")


def _roles(world: AgentWorld, messages: Any) -> JsonValue:
    if messages is None:
        return None
    return [world.to_json(read(message, "role"), "a message's role") for message in messages]


def _turn_record(name: str, value: Any, signal: Any, world: AgentWorld) -> JsonObject:
    """What one call saw, in the compact form the Node adapter records (spec/fixture-format.md)."""
    signal_seen = "same" if signal is world.signal else world.identity(signal)
    if name == "transform_context":
        return {"messages": _roles(world, value), "signal": signal_seen}
    if name == "prepare_request":
        level = read(value, "thinkingLevel")
        return {
            "model": world.to_json(read(read(value, "model"), "id"), "the request's model id"),
            "thinkingLevel": world.to_json(level, "the request's thinking level"),
            "messages": _roles(world, read(read(value, "context"), "messages")),
            "signal": signal_seen,
        }
    record: JsonObject = {
        "stopReason": world.to_json(read(read(value, "message"), "stopReason"), "the turn's stop reason"),
        "toolResults": [world.to_json(read(result, "toolCallId"), "a tool call id") for result in read(value, "toolResults") or []],
        "messages": _roles(world, read(read(value, "context"), "messages")),
        "newMessages": _roles(world, read(value, "newMessages")),
    }
    if name == "finish_turn":
        record["signal"] = signal_seen
    return record


def _turn_update(answer: JsonObject, world: AgentWorld, tools: list[Any]) -> dict[str, Any]:
    """A scripted answer as the port gets it: camelCase keys; a replacement context keeps the case's tools."""
    update: dict[str, Any] = {}
    for key, value in answer.items():
        if key == "context" and isinstance(value, dict):
            context: dict[str, Any] = {"messages": world.to_impl(list(value.get("messages") or []))}  # type: ignore[arg-type]
            if tools:
                context["tools"] = tools
            update["context"] = context
        elif key == "messages":
            update["messages"] = world.to_impl(value)
        else:
            update[key] = copy.deepcopy(value)
    return update


def scripted_turn_function(name: str, answers: JsonValue, world: AgentWorld, tools: list[Any]) -> Callable[..., Awaitable[Any]]:
    """``prepare_request`` / ``finish_turn`` / ``prepare_next_turn`` / ``transform_context``: call by call, the next answer.

    Every call is recorded in ``turn_functions[name]`` with ``after``, the trace line of the last event before
    it. An answer ``{throw: M}`` raises; ``None`` returns ``None`` (``transform_context``: the
    messages it got); ``transform_context``'s ``{keep_last: N}`` returns the last N messages.
    """
    if not isinstance(answers, list):
        raise HarnessError(f"{name} must be a list of answers, one per call")
    calls = [0]
    records = world.turn_functions.setdefault(name, [])

    async def function(value: Any, signal: Any = None) -> Any:
        after = trace_line(world.events[-1]) if world.events else None
        records.append({**_turn_record(name, value, signal, world), "after": after})
        index = calls[0]
        calls[0] = index + 1
        answer = answers[index] if index < len(answers) else None
        if isinstance(answer, dict) and "throw" in answer:
            raise ScriptedError(str(answer["throw"]))
        if name == "transform_context":
            keep = answer.get("keep_last") if isinstance(answer, dict) else None
            if isinstance(keep, int):
                kept = list(value)
                return kept[max(0, len(kept) - keep) :]
            if isinstance(answer, dict) and isinstance(answer.get("messages"), list):
                return world.to_impl(answer["messages"])
            return value
        return _turn_update(answer, world, tools) if isinstance(answer, dict) else None

    return function
