"""Chapter 09, Lab 9.1: ``reduce_agent_state`` (spec/spec.md, "Stateful agent", AGENT-STATE-1..8).

The Agent's state is derived from its events by a pure function: a new state for each
event, the given state and event left as they were. A run's start and end copy the
transcript they put in the state, so nothing the caller still holds is shared with it.
"""

from __future__ import annotations

import copy
from typing import Any


def reduce_agent_state(state: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """The state after ``event``; the very ``state`` when the event belongs to no active run (AGENT-STATE-4)."""
    if event["type"] == "run_start":
        return _started(state, event)
    if state.get("status") != "running" or state.get("activeRunId") != event["runId"]:
        return state
    if event["type"] == "loop":
        return _after_loop_event(state, event["event"])
    return _ended(state, event["result"])


def _started(state: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """AGENT-STATE-2: a new run, whatever the state was; the transcript grows by the patch and the message."""
    patch = [copy.deepcopy(event["system"])] if event.get("system") is not None else []
    # lastReason is left out (the course's `lastReason: undefined` serializes to no key).
    started = {key: value for key, value in state.items() if key != "lastReason"}
    return {
        **started,
        "status": "running",
        "activeRunId": event["runId"],
        "messages": [*copy.deepcopy(state["messages"]), *patch, copy.deepcopy(event["message"])],
        "streamingText": "",
        "pendingToolCallIds": [],
    }


def _after_loop_event(state: dict[str, Any], loop: dict[str, Any]) -> dict[str, Any]:
    """AGENT-STATE-5..7: only streaming text and pending tool calls follow the loop."""
    kind = loop["type"]
    if kind == "model_event" and loop["event"]["type"] == "text_delta":
        return {**state, "streamingText": state["streamingText"] + loop["event"]["delta"]}
    if kind == "tool_start":
        return {**state, "pendingToolCallIds": [*state["pendingToolCallIds"], loop["call"]["id"]]}
    if kind in ("tool_end", "tool_skipped"):
        ended = loop["result"]["toolCallId"]
        return {**state, "pendingToolCallIds": [call_id for call_id in state["pendingToolCallIds"] if call_id != ended]}
    if kind == "assistant_message":
        return {**state, "streamingText": ""}
    return state


def _ended(state: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """AGENT-STATE-8: idle again, the transcript is the run's result (copied), the diagnostics stay."""
    return {
        "status": "idle",
        "messages": copy.deepcopy(result["messages"]),
        "lastReason": result["reason"],
        "streamingText": "",
        "pendingToolCallIds": [],
        "diagnostics": state["diagnostics"],
    }
