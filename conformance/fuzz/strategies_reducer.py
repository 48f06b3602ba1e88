"""Hypothesis strategies for chapter 09's reducer, ``reduce_agent_state`` (lab 9.1, spec/spec.md section 11.1).

A program is one ``reduceAgentState(state, event)``: an ``AgentState`` as the Agent keeps one
(idle or running, a transcript, pending call ids, diagnostics) and an ``AgentEvent`` drawn to
meet it often (the active run's id, an id that is pending, a delta to append) and now and then
to miss it (another run, an idle state: AGENT-STATE-4). The strategy draws the event's kind
first and tags the program with the clause it exercises, so the case's clauses need no run.

What the spec leaves open is never demanded (:mod:`conformance.fuzz.expect_agent` loosens it):
whether a loop event that changes nothing returns the very state or an equal one
(AGENT-STATE-7), and whether the messages of a state a loop event returns are copies (only
``run_start`` and ``run_end`` must copy, AGENT-STATE-3).
"""

from __future__ import annotations

from typing import cast

from hypothesis import strategies as st

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program, any_message, assistant_message, system_message, text_block, texts, tool_call, user_message
from conformance.fuzz.strategies_loop import rarely

#: The run ids a state and an event name: few, so that events often belong to the active run.
RUN_IDS = st.sampled_from([1, 2, 3])
#: The run ids other than each one (built once: a filtered strategy is built and validated again on each draw).
OTHER_RUN_IDS = {active: st.sampled_from([other for other in (1, 2, 3) if other != active]) for active in (1, 2, 3)}
#: Call ids: few, so that an ended call is often a pending one (and sometimes pending twice).
CALL_IDS = st.sampled_from(["a", "b", "call-1"]) | texts
REASONS = st.sampled_from(["stop", "length", "error", "aborted", "maxSteps"])
diagnostics = st.lists(st.sampled_from(["subscriber: broken renderer"]) | texts, min_size=1, max_size=2)
transcripts = st.lists(any_message, max_size=3)
some_messages = st.lists(any_message, min_size=1, max_size=3)
pending_ids = st.lists(CALL_IDS, max_size=3)
some_pending_ids = st.lists(CALL_IDS, min_size=1, max_size=3)
streamed_texts = st.sampled_from(["hel", "ab"]) | texts.filter(bool)
tool_names = st.sampled_from(["probe", "echo"]) | texts
argument_deltas = st.sampled_from(['{"path":', "{}"]) | texts
DONE_REASONS = st.sampled_from(["stop", "toolUse", "length"])
ERROR_REASONS = st.sampled_from(["error", "aborted"])
OTHER_MODEL_EVENTS = st.sampled_from(["start", "toolcall_end", "done", "error"])

#: The event kinds, each with the clause it is about (AGENT-STATE-2, 4..8).
EVENT_CLAUSES = {
    "run_start": "AGENT-STATE-2",
    "text_delta": "AGENT-STATE-5",
    "toolcall_delta": "AGENT-STATE-5",
    "model_event": "AGENT-STATE-5",
    "tool_start": "AGENT-STATE-6",
    "tool_end": "AGENT-STATE-6",
    "tool_skipped": "AGENT-STATE-6",
    "assistant_message": "AGENT-STATE-7",
    "tool_progress": "AGENT-STATE-7",
    "turn_end": "AGENT-STATE-7",
    "run_end": "AGENT-STATE-8",
}


#: The branches drawn: each kind of event applied to a state running its run (twice those whose
#: handling holds most of a reducer's bugs: a lab's share of a private set is a handful of cases,
#: one event each), and an event the reducer must ignore: one reaching an idle state, one of another run.
ONCE = ("turn_end", "tool_progress", "model_event", "toolcall_delta", "tool_skipped")
# The kinds drawn once come first: Hypothesis draws the first branch whenever it draws its simplest
# programs, which the probe seeds draw too (they are left out as predictable).
KIND_DRAWS = [*ONCE, *[kind for kind in EVENT_CLAUSES if kind not in ONCE for _ in range(2)]]
IGNORED = ("idle", "other-run")
#: The kinds an ignored event is drawn from (a run_start is never ignored, AGENT-STATE-2).
LATE_KINDS = tuple(kind for kind in EVENT_CLAUSES if kind != "run_start")


@st.composite
def agent_state(draw: st.DrawFn, running: bool) -> JsonObject:
    """A running state, or an idle one (which may still name its last run: the status decides, AGENT-STATE-4).

    What most events change is drawn non-empty most of the time: a streamed text (replacing it
    and appending to it differ then), a transcript, a pending call.
    """
    state: JsonObject = {"status": "running" if running else "idle"}
    state["messages"] = cast(JsonValue, draw(transcripts if draw(rarely) else some_messages))
    if running or not draw(rarely):
        state["activeRunId"] = draw(RUN_IDS)
    if not draw(rarely):  # an idle state's, or one a port failed to drop: run_start must drop it
        state["lastReason"] = draw(REASONS)
    state["streamingText"] = "" if draw(rarely) else draw(streamed_texts)
    state["pendingToolCallIds"] = cast(JsonValue, draw(pending_ids if draw(rarely) else some_pending_ids))
    state["diagnostics"] = cast(JsonValue, draw(st.just([]) if draw(rarely) else diagnostics))
    return state


def _tool_result(draw: st.DrawFn, call_id: str) -> JsonObject:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": draw(tool_names),
        "content": cast(JsonValue, draw(st.lists(text_block(), max_size=2))),
        "isError": draw(st.booleans()),
        "timestamp": draw(st.integers(0, 2**40)),
    }


def _model_event(draw: st.DrawFn, kind: str) -> JsonObject:
    """A chapter 04 model event of ``kind``; its ``partial`` is a plausible one, which the reducer must not read."""
    partial = draw(assistant_message(("stop",), max_blocks=2))
    if kind == "text_delta":
        return {"type": "text_delta", "contentIndex": draw(st.integers(0, 2)), "delta": draw(texts), "partial": partial}
    if kind == "toolcall_delta":
        return {"type": "toolcall_delta", "contentIndex": 0, "delta": draw(argument_deltas), "partial": partial}
    if kind == "toolcall_end":
        return {"type": "toolcall_end", "contentIndex": 0, "toolCall": draw(tool_call()), "partial": partial}
    if kind == "start":
        return {"type": "start", "partial": partial}
    reason = draw(DONE_REASONS if kind == "done" else ERROR_REASONS)
    message = draw(assistant_message((reason,), max_blocks=2))
    return {"type": kind, "reason": reason, ("message" if kind == "done" else "error"): message}


def _loop_event(draw: st.DrawFn, kind: str, state: JsonObject) -> JsonObject:
    pending = cast(list[str], state["pendingToolCallIds"])
    ended = CALL_IDS if not pending or draw(rarely) else st.sampled_from(pending)
    if kind in ("text_delta", "toolcall_delta"):
        return {"type": "model_event", "event": _model_event(draw, kind)}
    if kind == "model_event":
        return {"type": "model_event", "event": _model_event(draw, draw(OTHER_MODEL_EVENTS))}
    if kind == "tool_start":
        call = draw(tool_call())
        call["id"] = draw(CALL_IDS)
        return {"type": "tool_start", "call": call}
    if kind in ("tool_end", "tool_skipped"):
        call_id = draw(ended)
        if call_id in pending and draw(st.booleans()):
            pending.append(call_id)  # started twice: its end removes both (AGENT-STATE-6)
        return {"type": kind, "result": _tool_result(draw, call_id)}
    if kind == "assistant_message":
        return {"type": "assistant_message", "message": draw(assistant_message())}
    if kind == "tool_progress":
        return {"type": "tool_progress", "callId": draw(ended), "content": cast(JsonValue, draw(st.lists(text_block(), max_size=2)))}
    return {"type": "turn_end", "reason": draw(REASONS)}


def reduce_agent_state_programs() -> st.SearchStrategy[Program]:
    """Each branch's programs as a strategy of their own (:data:`KIND_DRAWS`, :data:`IGNORED`): Hypothesis mutates
    what it drew before, so one strategy that drew the kind gave four turn_end events in twelve cases."""
    return st.one_of(*[reduce_agent_state_program(kind) for kind in KIND_DRAWS], *[ignored_program(why) for why in IGNORED])


def _event(draw: st.DrawFn, kind: str, state: JsonObject, run_id: int) -> JsonObject:
    """An event of ``kind`` and run ``run_id`` drawn to meet ``state`` (an id it holds pending, its transcript grown)."""
    if kind == "run_start":
        event: JsonObject = {"type": "run_start", "runId": run_id, "message": draw(user_message)}
        if not draw(rarely):
            event["system"] = draw(system_message())
        return event
    if kind == "run_end":
        messages = draw(st.lists(any_message, max_size=4))
        if draw(st.booleans()):  # the run's transcript, as the Agent's result has it: the state's, grown
            messages = [*cast(list[JsonValue], state["messages"]), *messages]
        result: JsonObject = {"reason": draw(REASONS), "messages": cast(JsonValue, messages), "steps": draw(st.integers(0, 5))}
        return {"type": "run_end", "runId": run_id, "result": result}
    return {"type": "loop", "runId": run_id, "event": _loop_event(draw, kind, state)}


@st.composite
def reduce_agent_state_program(draw: st.DrawFn, kind: str) -> Program:
    """An event of ``kind`` of the run a running state runs (or, for run_start, any state); tagged ``event:KIND``."""
    # A new run starts from an idle state too (AGENT-STATE-2 decides both); mostly from a running
    # one, where a reducer that ignores it shows.
    state = draw(agent_state(running=not draw(rarely) if kind == "run_start" else True))
    run_id = cast(int, state["activeRunId"]) if "activeRunId" in state and kind != "run_start" else draw(RUN_IDS)
    return Program("reduce_agent_state", {"state": state, "event": _event(draw, kind, state, run_id)}, tags={f"event:{kind}"})


@st.composite
def ignored_program(draw: st.DrawFn, why: str) -> Program:
    """A loop or run_end event the reducer must ignore: the state is idle (maybe naming the event's run), or runs another run."""
    kind = draw(st.sampled_from(LATE_KINDS))
    state = draw(agent_state(running=why != "idle"))
    active = state.get("activeRunId")
    if why == "idle":
        run_id = active if isinstance(active, int) and not draw(rarely) else draw(RUN_IDS)  # the status decides
    else:
        run_id = draw(OTHER_RUN_IDS[active if isinstance(active, int) else 1])
    event = _event(draw, kind, state, run_id)
    return Program("reduce_agent_state", {"state": state, "event": event}, tags={f"event:{kind}", "ignored", f"ignored:{why}"})
