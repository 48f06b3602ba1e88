"""The chapter 07 scenario runner of the in-process binding: steps, gates and stalls, on the reference."""

from __future__ import annotations

import time
from typing import Any

from conformance.adapters.reference import create
from conformance.common.jsontypes import JsonValue
from conformance.running.derived import loop_trace

USER = {"role": "user", "content": [{"type": "text", "text": "run"}], "timestamp": 1}


def assistant(content: list[Any], stop_reason: str) -> dict[str, Any]:
    usage = {"input": 0, "output": 0, "totalTokens": 0}
    message = {"role": "assistant", "content": content, "provider": "scripted", "model": "scripted-v1", "usage": usage}
    return {**message, "stopReason": stop_reason, "timestamp": 2}


def gated_input(steps: list[Any]) -> dict[str, Any]:
    call = {"type": "toolCall", "id": "c1", "name": "slow", "arguments": {"value": "x"}}
    return {
        "context": {"messages": [USER]},
        "model": {"turns": [{"message": assistant([call], "toolUse")}, {"message": assistant([], "stop")}]},
        "tools": [{"name": "slow", "description": "slow", "schema": {"shape": {"value": "string"}}, "script": [{"wait": "g"}]}],
        "steps": steps,
    }


def test_a_gate_never_released_is_a_stall_at_the_run_reported_at_once() -> None:
    started = time.perf_counter()
    observation = create().perform("run_agent_loop", gated_input(["start", "await_run"]))
    assert observation["stalled"] == {"step": 1, "waiting_for": "the run to settle"}
    assert observation["result"] is None and observation["error"] is None
    events: Any = observation["events"]
    assert [event["type"] for event in events][-2:] == ["assistant_message", "tool_start"]
    assert time.perf_counter() - started < 0.5, "idle settling ends the wait, not the deadline"


def test_an_event_that_never_comes_names_its_call() -> None:
    observation = create().perform("run_agent_loop", gated_input(["start", {"await_event": {"type": "tool_end", "callId": "c1"}}]))
    assert observation["stalled"] == {"step": 1, "waiting_for": "event tool_end of call c1"}


def test_released_gates_let_the_run_settle_and_a_missing_await_run_is_added() -> None:
    observation = create().perform("run_agent_loop", gated_input(["start", {"await_started": "slow"}, {"release": "g"}]))
    result: Any = observation["result"]
    assert observation["stalled"] is None
    assert result["reason"] == "stop" and result["steps"] == 2
    received = {"tool": "slow", "params": {"value": "x"}, "call_id": "c1", "signal": "absent", "report_progress": "other"}
    assert observation["received"] == [received]


def test_the_trace_names_each_event_by_its_key_field() -> None:
    result: JsonValue = {"toolCallId": "c1"}
    events: list[JsonValue] = [
        {"type": "model_event", "event": {"type": "start"}},
        {"type": "assistant_message", "message": {"stopReason": "toolUse"}},
        {"type": "tool_start", "call": {"id": "c1"}},
        {"type": "tool_progress", "callId": "c1", "content": []},
        {"type": "tool_end", "result": result},
        {"type": "tool_skipped", "result": result},
        {"type": "turn_end", "reason": "stop"},
        {"type": "surprise"},
        "not an event",
    ]
    assert loop_trace(events) == [
        "model_event:start",
        "assistant_message:toolUse",
        "tool_start:c1",
        "tool_progress:c1",
        "tool_end:c1",
        "tool_skipped:c1",
        "turn_end:stop",
        "surprise",
        "None",
    ]
