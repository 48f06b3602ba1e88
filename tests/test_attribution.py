"""Each bug is charged once, in the lab that owns it; hints only where they fit the divergence."""

from __future__ import annotations

import pytest

from conformance.cases import Case
from conformance.clauses import load_clauses
from conformance.execution import Outcome
from conformance.feedback import failure_report, fitting_hint, symptom_keys
from conformance.grading.attribution import attribute, symptoms
from conformance.grading.grader import grade_submission, prepare
from conformance.grading.rubric import parse_rubric
from conformance.matcher import Divergence
from tests.variants import VARIANTS

LABS = ("3.1", "3.2", "4.1", "4.2")
#: Lab 4.1 bugs that lab 4.2's cases also observe: without attribution they cost points in both.
#: (The in-process lab 3.2 variants cannot reach lab 4: the reference ScriptedModel uses its own
#: stream class. tests/test_grading_batch.py checks the JS result-is-a-copy variant instead.)
CROSS_LAB = ("requests-stored-by-reference", "requests-copied-shallowly", "partials-shared-between-events")


@pytest.mark.parametrize("name", CROSS_LAB)
def test_a_bug_later_labs_observe_costs_points_only_in_its_own_lab(name: str) -> None:
    variant = next(variant for variant in VARIANTS if variant.name == name)
    labs = {lab: {"weight": 25} for lab in LABS[LABS.index(variant.lab) :]}
    context = prepare(parse_rubric({"version": 1, "name": "from the bug's lab on", "labs": labs}, "test"))
    result = grade_submission(f"python:tests.variants:{name.replace('-', '_')}", context, name=name)
    lost = {lab.lab for lab in result.score.labs if lab.points < lab.max_points}
    assert lost == {variant.lab}
    later = [graded for graded in result.score.cases if graded.case.lab != variant.lab and graded.outcome.status == "failed"]
    assert later, "the bug must still fail later labs' cases, or this test shows nothing"
    assert all(graded.inherited is not None and graded.inherited.lab == variant.lab for graded in later)
    assert sum(lab.inherited for lab in result.score.labs) == len(later)


def scenario(case_id: str, lab: str, expect: dict[str, object], action: str = "result") -> Case:
    return Case(
        case_id,
        "scratch.yaml",
        1,
        "04",
        lab,
        ("SM-DONE-1",),
        "scratch",
        "scripted_model",
        {},
        steps=({"action": action, "expect": expect},),
    )


def failed(case: Case, observed: dict[str, object]) -> Outcome:
    return Outcome(
        case.id, "failed", "x", 0.0, divergence=Divergence("steps[0].x", "1", "2"), step_index=0, observation={"steps": [observed]}
    )


def test_symptoms_name_every_diverging_key_with_indexes_dropped() -> None:
    case = scenario(
        "c", "4.1", {"events": [{"type": "start", "partial": {"content": []}}, {"type": "done"}], "finished": True}, action="consume"
    )
    observed = {"events": [{"type": "start", "partial": {"content": [1]}}, {"type": "error"}], "finished": True}
    assert symptoms(case, {"steps": [observed]}) == {"consume: events[].partial", "consume: events[].type"}
    assert symptoms(case, {"steps": [{"events": [], "finished": False}]}) == {"consume: events", "consume: finished"}


def test_a_case_is_inherited_only_when_an_earlier_lab_shows_every_symptom() -> None:
    identity = {"state": "resolved", "same_object_as": "terminal_event"}
    copy = {"state": "resolved", "same_object_as": None}
    earlier = scenario("earlier", "3.2", identity)
    only_identity = scenario("only-identity", "4.1", identity)
    also_own_bug = scenario("also-own-bug", "4.1", {**identity, "value": 1})
    results = [
        (earlier, failed(earlier, copy)),
        (only_identity, failed(only_identity, copy)),
        (also_own_bug, failed(also_own_bug, {**copy, "value": 2})),
    ]
    inherited = attribute(results, LABS)
    assert set(inherited) == {"only-identity"}
    assert inherited["only-identity"].lab == "3.2" and inherited["only-identity"].evidence is earlier
    # Without the evidence in lab 3.2, the lab 4.1 case is charged in lab 4.1.
    assert attribute(results[1:], LABS) == {}


def test_a_case_without_a_divergence_is_always_charged() -> None:
    earlier = scenario("earlier", "3.2", {"same_object_as": "terminal_event"})
    hung = scenario("hung", "4.1", {"same_object_as": "terminal_event"})
    results = [(earlier, failed(earlier, {"same_object_as": None})), (hung, Outcome("hung", "failed", "timed out", 1.0, timed_out=True))]
    assert attribute(results, LABS) == {}


def test_symptom_keys_for_scenarios_and_pure_operations() -> None:
    assert symptom_keys("steps[3].events[0].partial.content") == {"partial"}
    assert symptom_keys("steps[7].requests[0].messages") == {"requests", "messages"}
    assert symptom_keys("steps[2].same_object_as") == {"same_object_as"}
    assert symptom_keys("value.timestamp") == {"timestamp"}
    assert symptom_keys("value") == {"value"}


def test_a_hint_is_shown_only_for_the_divergence_it_was_written_for() -> None:
    hint = "If an early event's partial already shows blocks played later, every event carries the same partial object."
    case = Case(
        "c", "scratch.yaml", 1, "04", "4.2", ("SM-PLAY-3",), "scratch", "scripted_model", {}, steps=({"action": "consume"},), hint=(hint,)
    )

    def outcome(path: str | None) -> Outcome:
        divergence = Divergence(path, "1", "2") if path else None
        return Outcome("c", "failed", "m", 0.0, divergence=divergence, step_index=0 if path else None)

    assert fitting_hint(case, outcome("steps[0].events[1].partial.content")) == hint
    assert fitting_hint(case, outcome("steps[0].events[0].type")) is None
    assert fitting_hint(case, outcome(None)) is None  # a timeout or a crash: no advice about another bug
    assert "hint:" not in failure_report(case, outcome("steps[0].events[0].type"), load_clauses())


def test_a_silent_stream_is_said_plainly() -> None:
    case = Case(
        "c",
        "scratch.yaml",
        1,
        "04",
        "4.1",
        ("SM-REQ-1", "SM-PLAY-1"),
        "scratch",
        "scripted_model",
        {},
        steps=({"action": "consume", "expect": {"events": [{"type": "start"}], "finished": True}},),
        step_lines=(2,),
    )
    silent = Outcome(
        "c",
        "failed",
        "steps[0].events: expected 1 item but got 0 items",
        0.3,
        divergence=Divergence("steps[0].events", "1 item", "0 items"),
        step_index=0,
        observation={"steps": [{"events": [], "finished": False}]},
    )
    report = failure_report(case, silent, load_clauses())
    assert "0 events" in report and "stream() never pushed anything" in report
