"""Broken variants of the chapter 09 reducer (``reference_impl/agent_state.py``), one bug each.

Each :class:`ReducerVariant` is a porting trap a student could write: a reducer that ignores
the run id, pushes onto the given state's list, copies messages shallowly, forgets to clear
the streamed text... ``tests/judging/test_reducer_variants.py`` proves that the variant fails
its named case and only cases that cite its clause.
"""

from __future__ import annotations

import copy
import types
from dataclasses import dataclass
from typing import Any

from reference_impl import agent_state
from tests.support.variants import reference_binding

State = dict[str, Any]
Event = dict[str, Any]
reduce = agent_state.reduce_agent_state


@dataclass(frozen=True)
class ReducerVariant:
    """A broken binding, the clause it breaks, and one case that must fail at ``message_fragment``."""

    name: str
    binding: types.SimpleNamespace
    clause: str
    failing_case: str
    message_fragment: str


def _loop_kind(event: Event) -> str | None:
    return str(event["event"]["type"]) if event["type"] == "loop" else None


def _ignores_run_id(state: State, event: Event) -> State:
    # While running, an event of any run is applied to the active one.
    if event["type"] == "run_start" or state.get("status") != "running":
        return reduce(state, event)
    reduced = reduce({**state, "activeRunId": event["runId"]}, event)
    return {**reduced, "activeRunId": state["activeRunId"]} if "activeRunId" in reduced else reduced


def _ignores_status(state: State, event: Event) -> State:
    # Only the run id decides, so an idle state that still names its last run takes that run's events.
    if event["type"] != "run_start" and state.get("activeRunId") == event["runId"]:
        return reduce({**state, "status": "running"}, event)
    return reduce(state, event)


def _copies_ignored_state(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    return dict(reduced) if reduced is state else reduced


def _pushes_pending_in_place(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    if _loop_kind(event) == "tool_start" and reduced is not state:
        state["pendingToolCallIds"].append(event["event"]["call"]["id"])
        return {**reduced, "pendingToolCallIds": state["pendingToolCallIds"]}
    return reduced


def _replaces_streaming_text(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    if _loop_kind(event) == "model_event" and event["event"]["event"]["type"] == "text_delta" and reduced is not state:
        return {**reduced, "streamingText": event["event"]["event"]["delta"]}
    return reduced


def _streams_every_delta(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    model_event = event["event"].get("event") if _loop_kind(event) == "model_event" else None
    if model_event is not None and model_event["type"] == "toolcall_delta" and state.get("activeRunId") == event["runId"]:
        return {**reduced, "streamingText": state["streamingText"] + model_event["delta"]}
    return reduced


def _unhandled(kind: str) -> Any:
    """A reducer that forgets one loop event: ``kind`` changes nothing."""

    def reducer(state: State, event: Event) -> State:
        active = state.get("status") == "running" and state.get("activeRunId") == event["runId"]
        return dict(state) if _loop_kind(event) == kind and active else reduce(state, event)

    return reducer


def _copies_messages_shallowly(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    if event["type"] == "run_start":
        patch = [event["system"]] if event.get("system") is not None else []
        return {**reduced, "messages": [*state["messages"], *patch, event["message"]]}
    return reduced


def _shares_result_messages(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    if event["type"] == "run_end" and reduced is not state:
        return {**reduced, "messages": event["result"]["messages"]}
    return reduced


def _appends_result_messages(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    if event["type"] == "run_end" and reduced is not state:
        return {**reduced, "messages": copy.deepcopy([*state["messages"], *event["result"]["messages"]])}
    return reduced


def _keeps_last_reason(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    if event["type"] == "run_start" and "lastReason" in state:
        return {**reduced, "lastReason": state["lastReason"]}
    return reduced


def _resets_diagnostics_at_run_end(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    if event["type"] == "run_end" and reduced is not state:
        return {**reduced, "diagnostics": []}
    return reduced


def _keeps_streaming_text_at_run_end(state: State, event: Event) -> State:
    # The run's end builds the idle state from the running one and forgets to clear the text.
    reduced = reduce(state, event)
    if event["type"] == "run_end" and reduced is not state:
        return {**reduced, "streamingText": state["streamingText"]}
    return reduced


def _patch_after_message(state: State, event: Event) -> State:
    if event["type"] == "run_start" and event.get("system") is not None:
        reduced = reduce(state, {key: value for key, value in event.items() if key != "system"})
        return {**reduced, "messages": [*reduced["messages"], copy.deepcopy(event["system"])]}
    return reduce(state, event)


def _removes_first_copy_only(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    if _loop_kind(event) == "tool_end" and reduced is not state:
        pending = list(state["pendingToolCallIds"])
        if event["event"]["result"]["toolCallId"] in pending:
            pending.remove(event["event"]["result"]["toolCallId"])
        return {**reduced, "pendingToolCallIds": pending}
    return reduced


def _turn_end_ends_run(state: State, event: Event) -> State:
    reduced = reduce(state, event)
    if _loop_kind(event) == "turn_end" and state.get("activeRunId") == event["runId"]:
        ended = {**state, "status": "idle", "lastReason": event["event"]["reason"]}
        ended.pop("activeRunId", None)
        return ended
    return reduced


def _ignores_run_start_while_running(state: State, event: Event) -> State:
    if event["type"] == "run_start" and state.get("status") == "running":
        return state
    return reduce(state, event)


_KEEPS_STREAMING_TEXT = _unhandled("assistant_message")
_SKIPPED_STAYS_PENDING = _unhandled("tool_skipped")


def _variant(name: str, function: Any, clause: str, failing_case: str, fragment: str) -> ReducerVariant:
    return ReducerVariant(name, reference_binding(reduce_agent_state=function), clause, failing_case, fragment)


REDUCER_VARIANTS: list[ReducerVariant] = [
    _variant("ignores-run-id", _ignores_run_id, "AGENT-STATE-4", "agent-state-course-stale-loop", "streamingText"),
    _variant("ignores-status", _ignores_status, "AGENT-STATE-4", "agent-state-idle-ignores-run-end-of-its-run-id", "value"),
    _variant("copies-ignored-state", _copies_ignored_state, "AGENT-STATE-4", "agent-state-course-stale-run-end", "same_object"),
    _variant("pushes-pending-in-place", _pushes_pending_in_place, "AGENT-STATE-1", "agent-state-course-tool-start", "input_unchanged"),
    _variant("replaces-streaming-text", _replaces_streaming_text, "AGENT-STATE-5", "agent-state-text-delta-appends", "streamingText"),
    _variant("streams-tool-call-deltas", _streams_every_delta, "AGENT-STATE-5", "agent-state-toolcall-delta-not-streamed", "streamingText"),
    _variant("keeps-streaming-text", _KEEPS_STREAMING_TEXT, "AGENT-STATE-7", "agent-state-course-assistant-message", "streamingText"),
    _variant("shallow-copied-messages", _copies_messages_shallowly, "AGENT-STATE-3", "agent-state-course-run-start", "messages_detached"),
    _variant("shares-result-messages", _shares_result_messages, "AGENT-STATE-3", "agent-state-course-run-end", "messages_detached"),
    _variant("appends-result-messages", _appends_result_messages, "AGENT-STATE-8", "agent-state-run-end-replaces-messages", "value"),
    _variant("keeps-last-reason", _keeps_last_reason, "AGENT-STATE-2", "agent-state-run-start-clears-last-reason", "lastReason"),
    _variant("resets-diagnostics", _resets_diagnostics_at_run_end, "AGENT-STATE-8", "agent-state-run-end-keeps-diagnostics", "diagnostics"),
    _variant(
        "keeps-streaming-text-at-run-end",
        _keeps_streaming_text_at_run_end,
        "AGENT-STATE-8",
        "agent-state-run-end-keeps-diagnostics",
        "streamingText",
    ),
    _variant("patch-after-message", _patch_after_message, "AGENT-STATE-2", "agent-state-course-run-start-system-patch", "messages[0]"),
    _variant("skipped-stays-pending", _SKIPPED_STAYS_PENDING, "AGENT-STATE-6", "agent-state-tool-skipped-removes", "pendingToolCallIds"),
    _variant(
        "removes-first-copy-only",
        _removes_first_copy_only,
        "AGENT-STATE-6",
        "agent-state-tool-end-removes-every-copy",
        "pendingToolCallIds",
    ),
    _variant("turn-end-ends-run", _turn_end_ends_run, "AGENT-STATE-7", "agent-state-turn-end-changes-nothing", "value"),
    _variant(
        "run-start-ignored-while-running",
        _ignores_run_start_while_running,
        "AGENT-STATE-2",
        "agent-state-run-start-while-running",
        "activeRunId",
    ),
]
