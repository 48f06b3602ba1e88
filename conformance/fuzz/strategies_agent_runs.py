"""Labs 9.2 and 9.3's ``run_agent`` scenarios (:mod:`conformance.fuzz.strategies_agent`).

Lab 9.2: runs one after another, the busy guard, the system prompt, a model that throws, a
run_end listener that prompts. Lab 9.3: subscribers and copies.
"""

from __future__ import annotations

from typing import cast

from hypothesis import strategies as st

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program, texts
from conformance.fuzz.strategies_agent_scene import MUTATED, WATCHED, Scenario, few, observing_actions, sections, usually, when
from conformance.fuzz.strategies_loop import rarely

# -- lab 9.2: runs, the busy guard, the system prompt -------------------------------------------


def _patch(draw: st.DrawFn, scene: Scenario, chance: st.SearchStrategy[bool]) -> JsonObject:
    """A prompt's ``system`` option (content, sections, both or neither) when ``chance`` draws True; else no option."""
    if not draw(chance):
        return {}
    patch: JsonObject = {}
    if draw(st.booleans()):
        patch["content"] = draw(texts)
    if draw(st.booleans()):
        patch["sections"] = cast(JsonValue, draw(sections))
    scene.tags.add("patch")
    return {"system": patch}


@st.composite
def sequential_program(draw: st.DrawFn) -> Program:
    """One to three prompts one after another, with tool round trips, a system prompt, patches and a step limit now and then."""
    scene = Scenario(draw, "9.2", "sequential")
    scene.system_prompt(usually)
    if draw(rarely):
        scene.agent["max_steps"] = draw(st.integers(1, 2))
    for index in range(draw(st.integers(1, 3))):
        scene.rounds(2)
        scene.turns.append(scene.text())
        name = scene.prompt(f"r{index + 1}", **_patch(draw, scene, st.booleans()))
        scene.steps.append({"await_prompt": name})
        if draw(rarely):
            scene.steps.append({"snapshot": f"after-{index + 1}"})
    return scene.program()


@st.composite
def busy_program(draw: st.DrawFn) -> Program:
    """Prompts while run 1 waits on its held turn are rejected; then run 1 ends and, maybe, run 2 runs."""
    scene = Scenario(draw, "9.2", "busy")
    scene.system_prompt(rarely)  # the constructor's prompt heads every run's transcript (AGENT-RUN-1)
    scene.rounds(1)
    scene.turns.extend([scene.text(gate="t1"), scene.text()])
    scene.prompt("one", **_patch(draw, scene, rarely))
    for index in range(draw(few)):
        scene.prompt(f"parallel-{index + 1}")
    scene.steps.extend([{"complete": "t1"}, {"await_prompt": "one"}])
    if draw(st.booleans()):
        scene.run("two")
    return scene.program()


@st.composite
def model_throws_program(draw: st.DrawFn) -> Program:
    """``stream()`` throws after zero to two committed round trips; the run ends error and the next prompt runs."""
    scene = Scenario(draw, "9.2", "model-throws")
    scene.system_prompt(rarely)  # the constructor's prompt heads every run's transcript (AGENT-RUN-1)
    scene.rounds(2)
    scene.turns.extend([{"throw": draw(texts)}, scene.text()])
    scene.run("p1", **_patch(draw, scene, rarely))
    scene.maybe({"snapshot": "after-failure"})
    scene.prompt("retry", **_patch(draw, scene, rarely))
    return scene.program()


@st.composite
def run_end_listener_program(draw: st.DrawFn) -> Program:
    """A run_end:1 listener prompts run 2, which survives run 1's cleanup; a third prompt meanwhile is busy."""
    scene = Scenario(draw, "9.2", "run-end-listener")
    scene.system_prompt(rarely)  # the constructor's prompt heads every run's transcript (AGENT-RUN-1)
    scene.rounds(1)
    scene.turns.extend([scene.text(), scene.text(gate="t2")])
    scene.subscriber("starter", [{"when": {"type": "run_end", "runId": 1}, "do": [{"prompt": {"as": "second", "text": draw(texts)}}]}])
    scene.subscriber("lifecycle", [])
    scene.run("first")
    scene.steps.append({"await_request": 2 + len(scene.executor)})
    if draw(st.booleans()):
        scene.prompt("third")
        scene.tags.add("third")
    scene.steps.extend([{"complete": "t2"}, {"await_prompt": "second"}, {"snapshot": "end"}])
    return scene.program()


# -- lab 9.3: subscribers and copies ---------------------------------------------------------------


def _observing_rule(draw: st.DrawFn, scene: Scenario) -> JsonObject:
    actions: list[JsonValue] = []
    for _ in range(draw(few)):
        action = draw(observing_actions)
        scene.tags.add(action)
        actions.append({"throw": draw(texts)} if action == "throw" else action)
    return {"when": when(draw(WATCHED), 1 if draw(rarely) else None), "do": actions}


@st.composite
def subscribers_program(draw: st.DrawFn) -> Program:
    """Subscribers that snapshot, record or throw; one subscribed or unsubscribed during a delivery or between runs."""
    scene = Scenario(draw, "9.3", "subscribers")
    count = draw(st.integers(1, 3))
    names = [f"s{index + 1}" for index in range(count)]
    for name in names:
        scene.subscriber(name, [_observing_rule(draw, scene) for _ in range(draw(few))])
    toggle = draw(st.sampled_from(["subscribe-late", "unsubscribe-during", "between-runs"]))
    if toggle == "unsubscribe-during" and count == 1:
        names.append("victim")
        scene.subscriber("victim", [])
    if toggle == "subscribe-late":  # the late one first gets the event after the one being delivered
        scene.subscriber("late", [], subscribed=False)
        cast(list[JsonObject], scene.subscribers[0]["rules"]).append(
            {"when": {"type": "run_start", "runId": 1}, "do": [{"subscribe": "late"}]}
        )
    elif toggle == "unsubscribe-during":  # the victim still gets the event being delivered
        cast(list[JsonObject], scene.subscribers[0]["rules"]).append(
            {"when": {"type": "run_start", "runId": 1}, "do": [{"unsubscribe": names[-1]}]}
        )
    runs = draw(few) if toggle != "between-runs" else 2
    for index in range(runs):
        scene.rounds(1)
        scene.turns.append(scene.text())
        scene.run(f"r{index + 1}")
        if toggle == "between-runs" and index == 0:
            scene.steps.append({"unsubscribe": draw(st.sampled_from(names))})
    return scene.program()


@st.composite
def copies_program(draw: st.DrawFn) -> Program:
    """A careless subscriber mutates the event it got, the caller mutates its result and a snapshot: none reaches the Agent."""
    scene = Scenario(draw, "9.3", "copies")
    watched = draw(MUTATED)
    scene.subscriber("mutator", [{"when": when(watched), "do": ["mutate_event"]}])
    if draw(st.booleans()):
        scene.subscriber("reader", [{"when": when(watched), "do": ["record"]}])
    scene.rounds(1)
    scene.turns.append(scene.text())
    name = scene.run("question")
    scene.maybe({"mutate_result": name})
    scene.maybe("mutate_state")
    scene.steps.append({"snapshot": "internal"})
    if draw(rarely):
        scene.turns.append(scene.text())
        scene.run("again")
    return scene.program()


@st.composite
def uncloneable_program(draw: st.DrawFn) -> Program:
    """A tool result whose details cannot be cloned becomes a failure result, and the run goes on to its stop."""
    scene = Scenario(draw, "9.3", "uncloneable")
    scene.rounds(1)
    scene.turns.append(scene.tool_round(uncloneable=True))
    scene.rounds(1)
    scene.turns.append(scene.text())
    if draw(st.booleans()):
        scene.subscriber("ends", [{"when": {"type": "loop", "loop": "tool_end"}, "do": ["record"]}])
    scene.run("p1")
    scene.steps.append({"snapshot": "after"})
    return scene.program()


@st.composite
def changed_later_program(draw: st.DrawFn) -> Program:
    """The model rewrites the messages it answered with: the transcript keeps its copies."""
    scene = Scenario(draw, "9.3", "changed-later")
    # The change shows in a later request: the run's last answer is copied into the state at run_end anyway.
    for index in range(draw(few)):
        scene.turns.append(scene.tool_round(changed_later=index == 0 or draw(st.booleans())))
    scene.turns.append(scene.text(changed_later=True))
    scene.run("one")
    return scene.program()


@st.composite
def queued_event_program(draw: st.DrawFn) -> Program:
    """A run_end:1 listener prompts run 2: its run_start is queued, reduced and delivered after run_end:1 reached everyone."""
    scene = Scenario(draw, "9.3", "queued-event")
    scene.rounds(1)
    scene.turns.extend([scene.text(), scene.text()])
    scene.subscriber("starter", [{"when": {"type": "run_end", "runId": 1}, "do": [{"prompt": {"as": "two", "text": draw(texts)}}]}])
    scene.subscriber(
        "watcher",
        [{"when": {"type": "run_end", "runId": 1}, "do": ["snapshot"]}, {"when": {"type": "run_start", "runId": 2}, "do": ["snapshot"]}],
    )
    scene.run("one")
    scene.steps.append({"await_prompt": "two"})
    return scene.program()
