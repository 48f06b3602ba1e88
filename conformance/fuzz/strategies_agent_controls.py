"""Labs 9.4 and 9.5's ``run_agent`` scenarios (:mod:`conformance.fuzz.strategies_agent`): abort; steering and follow-up."""

from __future__ import annotations

from typing import cast

from hypothesis import strategies as st

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program
from conformance.fuzz.strategies_agent_scene import Scenario, early_stop_reasons, few, queue_actions, when
from conformance.fuzz.strategies_loop import call_block, executor_script, rarely, turn

# -- lab 9.4: abort --------------------------------------------------------------------------------


@st.composite
def abort_in_run_start_program(draw: st.DrawFn) -> Program:
    """A run_start:1 listener aborts (once or twice): no request, one run_end; the next prompt runs on a new signal."""
    scene = Scenario(draw, "9.4", "abort-in-run-start")
    scene.subscriber("aborter", [{"when": {"type": "run_start", "runId": 1}, "do": cast(JsonValue, ["abort"] * draw(few))}])
    scene.rounds(1)
    scene.turns.append(scene.text())
    scene.run("cancel")
    scene.maybe({"snapshot": "after-cancel"})
    scene.prompt("next")
    return scene.program()


@st.composite
def abort_during_tool_program(draw: st.DrawFn) -> Program:
    """Aborted while a tool waits on its gate: its result is kept, no further request; the next run's signal is new."""
    scene = Scenario(draw, "9.4", "abort-during-tool")
    scene.rounds(1)
    gated = scene.tool_round(gate="cancelled")
    scene.turns.extend([gated, scene.text(), scene.text()])
    name = cast(JsonObject, cast(list[JsonValue], cast(JsonObject, gated["message"])["content"])[-1])["name"]
    scene.prompt("p1")
    scene.steps.extend([{"await_started": name}, *["abort"] * draw(few), {"release": "cancelled"}, {"await_prompt": "p1"}])
    if draw(st.booleans()):
        scene.prompt("next")
    return scene.program()


@st.composite
def abort_ignored_program(draw: st.DrawFn) -> Program:
    """A held turn that ignores the abort completes its text: the loop checks the signal at the stop, so the run is aborted."""
    scene = Scenario(draw, "9.4", "abort-ignored")
    scene.rounds(1)
    before = len(scene.turns)
    scene.turns.append(scene.text(gate="t1", honor_abort=False))
    if draw(rarely):  # the text stop on the last step the limit allows: still aborted (AGENT-ABORT-4)
        scene.agent["max_steps"] = before + 1
    scene.prompt("p1")
    scene.steps.extend([{"await_request": before + 1}, "abort", {"complete": "t1"}, {"await_prompt": "p1"}])
    return scene.program()


@st.composite
def abort_reaches_model_program(draw: st.DrawFn) -> Program:
    """Aborted while the model holds its turn: the model sees the run's signal aborted and the run ends aborted."""
    scene = Scenario(draw, "9.4", "abort-reaches-model")
    scene.rounds(1)
    before = len(scene.turns)
    scene.turns.extend([scene.text(gate="t1"), scene.text()])
    scene.prompt("p1")
    scene.steps.extend([{"await_request": before + 1}, "abort", {"await_prompt": "p1"}])
    if draw(st.booleans()):
        scene.prompt("next")
        scene.tags.add("next")
    return scene.program()


@st.composite
def abort_while_idle_program(draw: st.DrawFn) -> Program:
    """``abort()`` while idle does nothing, before the first run and between runs."""
    scene = Scenario(draw, "9.4", "abort-while-idle")
    scene.maybe("abort")
    scene.rounds(1)
    scene.turns.append(scene.text())
    scene.run("one")
    scene.steps.extend(["abort"] * draw(few))
    scene.rounds(1)
    scene.turns.append(scene.text())
    scene.prompt("two")
    return scene.program()


# -- lab 9.5: steering and follow-up ---------------------------------------------------------------


@st.composite
def steer_during_batch_program(draw: st.DrawFn) -> Program:
    """Steering while a batch of one or two gated calls runs: taken, in order, after the whole batch is paired."""
    scene = Scenario(draw, "9.5", "steer-during-batch")
    count = draw(few)
    calls: list[JsonValue] = []
    gated: list[tuple[str, str, str]] = []
    for index in range(count):
        call_id, name, gate = scene.ids.call_id(), scene.ids.name(), f"g{index + 1}"
        scene.executor[call_id] = cast(JsonValue, executor_script(draw, call_id, name, gate, throws=False))
        calls.append(call_block(call_id, name, {}))
        gated.append((gate, name, call_id))
    scene.turns.extend([turn(draw, calls, "toolUse"), scene.text(), scene.text()])
    if draw(rarely):  # the batch on the last step the limit allows: the steering is taken, then maxSteps
        scene.agent["max_steps"] = 1
    scene.prompt("p1")
    scene.steps.extend([{"await_started": [name for _, name, _ in gated]}, *queue_actions(draw, steer=True, follow=False)])
    for gate, _, call_id in draw(st.permutations(gated)):
        scene.steps.extend([{"release": gate}, {"await_event": {"type": "loop", "loop": "tool_end", "callId": call_id}}])
    scene.steps.append({"await_prompt": "p1"})
    return scene.program()


@st.composite
def steer_at_text_stop_program(draw: st.DrawFn) -> Program:
    """Steering while the model holds a text turn: the stop makes another request with it (maxSteps at the limit)."""
    scene = Scenario(draw, "9.5", "steer-at-text-stop")
    scene.rounds(1)
    before = len(scene.turns)
    scene.turns.extend([scene.text(gate="t1"), scene.text(), scene.text()])
    if draw(rarely):
        scene.agent["max_steps"] = before + 1
    scene.prompt("p1")
    scene.steps.extend([{"await_request": before + 1}, *queue_actions(draw, steer=True, follow=False)])
    scene.steps.extend([{"complete": "t1"}, {"await_prompt": "p1"}])
    return scene.program()


@st.composite
def follow_ups_program(draw: st.DrawFn) -> Program:
    """Follow-ups (and steering) queued at run_start: steering first, follow-ups only after a natural stop."""
    scene = Scenario(draw, "9.5", "follow-ups")
    # Both always: which of the two queues a stop takes first shows only with both.
    actions = [*queue_actions(draw, steer=False, follow=True), *queue_actions(draw, steer=True, follow=False)]
    scene.subscriber("queuer", [{"when": {"type": "run_start", "runId": 1}, "do": cast(JsonValue, draw(st.permutations(actions)))}])
    if draw(rarely):  # steering queued then is taken after the batch, follow-ups wait for the stop
        scene.turns.append(scene.tool_round())
        scene.tags.add("batch")
    scene.turns.extend([scene.text(), scene.text(), scene.text()])
    scene.run("p1")
    return scene.program()


@st.composite
def closed_program(draw: st.DrawFn) -> Program:
    """``steer`` and ``followUp`` throw while idle and from the run's turn_end on (a listener's call included)."""
    scene = Scenario(draw, "9.5", "closed")
    if draw(st.booleans()):
        scene.steps.extend(queue_actions(draw, steer=True, follow=True))
    # A turn_end listener always: its call is the one a port that closes input only at run_end accepts.
    rules: list[JsonObject] = [{"when": when(("loop", "turn_end")), "do": queue_actions(draw, steer=True, follow=True)}]
    if draw(st.booleans()):
        rules.append({"when": when(("run_end", None)), "do": queue_actions(draw, steer=True, follow=True)})
    scene.subscriber("late", rules)
    scene.rounds(1)
    scene.turns.append(scene.text())
    scene.run("p1")
    if draw(st.booleans()):
        scene.steps.extend(queue_actions(draw, steer=True, follow=True))
    return scene.program()


@st.composite
def discarded_program(draw: st.DrawFn) -> Program:
    """What run 1 queued is discarded when it ends error or length: the retry never sees it."""
    scene = Scenario(draw, "9.5", "discarded")
    scene.subscriber("queuer", [{"when": {"type": "run_start", "runId": 1}, "do": queue_actions(draw, steer=True, follow=True)}])
    scene.turns.extend([scene.text(draw(early_stop_reasons)), scene.text()])
    scene.run("fail")
    scene.prompt("retry")
    return scene.program()
