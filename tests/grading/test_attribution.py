"""Each bug is charged once, in the lab that owns it; hints only where they fit the divergence."""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping

import pytest

from conformance.commands.fixtures_check import DEFAULT_VARIANTS, graded_from_its_lab, load_variants, misplaced
from conformance.common.jsontypes import JsonValue
from conformance.feedback.failure_report import failure_report
from conformance.grading.attribution import attribute, symptoms
from conformance.grading.grader import GradeOptions, SubmissionResult, grade_submission, prepare
from conformance.grading.rubric import load_rubric, parse_rubric
from conformance.grading.scoring import Score, score
from conformance.judging.bearing import fitting_hint, symptom_keys
from conformance.judging.outcome import Divergence, Outcome
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from conformance.reports.formats import markdown, terminal
from conformance.reports.html.run_site import implementation_body
from conformance.reports.html.submission_page import submission_page
from tests.support.laundering_projects import CHEATS, HONEST, make_laundering_project
from tests.support.requirements import needs_node, require

LABS = ("3.1", "3.2", "4.1", "4.2")
#: Lab 4.1 bugs that lab 4.2's cases also observe: without attribution they cost points in both.
#: (The in-process lab 3.2 variants cannot reach lab 4: the reference ScriptedModel uses its own
#: stream class. tests/farm/test_grading_batch.py checks the JS result-is-a-copy variant instead.)
CROSS_LAB = ("requests-stored-by-reference", "requests-copied-shallowly", "partials-shared-between-events")


@pytest.mark.parametrize("name", CROSS_LAB)
def test_a_bug_later_labs_observe_costs_points_only_in_its_own_lab(name: str) -> None:
    # The rule is `fixtures check`'s (make test runs it first); this test holds it to these bugs and shows they reach later labs.
    variant = next(variant for variant in load_variants(DEFAULT_VARIANTS[0]) if variant.name == name)
    result = graded_from_its_lab(variant)
    assert misplaced(variant, result) == []
    lost = {lab.lab for lab in result.score.labs if lab.points < lab.max_points}
    assert lost == {variant.lab}
    later = [graded for graded in result.score.cases if graded.case.lab != variant.lab and graded.outcome.status == "failed"]
    assert later, "the bug must still fail later labs' cases, or this test shows nothing"
    assert all(graded.inherited is not None and graded.inherited.lab == variant.lab for graded in later)
    assert sum(lab.inherited for lab in result.score.labs) == len(later)


def scenario(
    case_id: str, lab: str, expect: Mapping[str, JsonValue], action: str = "result", clauses: tuple[str, ...] = ("SM-DONE-1",)
) -> Case:
    return Case(
        case_id,
        "scratch.yaml",
        1,
        "04",
        lab,
        clauses,
        "scratch",
        "scripted_model",
        {},
        steps=({"action": action, "expect": dict(expect)},),
    )


def failed(case: Case, observed: Mapping[str, JsonValue]) -> Outcome:
    return Outcome(
        case.id, "failed", "x", 0.0, divergence=Divergence("steps[0].x", "1", "2"), step_index=0, observation={"steps": [dict(observed)]}
    )


def test_symptoms_name_every_diverging_key_with_the_event_index_and_type() -> None:
    case = scenario(
        "c", "4.1", {"events": [{"type": "start", "partial": {"content": []}}, {"type": "done"}], "finished": True}, action="consume"
    )
    observed: JsonValue = {"events": [{"type": "start", "partial": {"content": [1]}}, {"type": "error"}], "finished": True}
    assert symptoms(case, {"steps": [observed]}) == {"consume: events[0](start).partial.content", "consume: events[1](done).type"}
    # A list of the wrong length says its length and the first item that differs, so "no
    # events at all" and "one event too many" are different bugs.
    assert symptoms(case, {"steps": [{"events": [], "finished": False}]}) == {
        "consume: events has 0 items, fewer than expected (first difference: events[0](start))",
        "consume: finished",
    }
    longer: JsonValue = {"events": [{"type": "start", "partial": {"content": []}}, {"type": "done"}, {"type": "done"}], "finished": True}
    assert symptoms(case, {"steps": [longer]}) == {"consume: events has 3 items, more than expected (first difference: events[2])"}
    requests = scenario("r", "4.1", {"requests": [{"messages": []}, {"messages": [1]}]}, action="requests")
    assert symptoms(requests, {"steps": [{"requests": [{"messages": []}, {"messages": [1, 2]}]}]}) == {"requests: requests[1].messages"}


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


IDENTITY = {"state": "resolved", "same_object_as": "terminal_event"}
COPY = {"state": "resolved", "same_object_as": None}


def test_a_failure_that_cost_nothing_excuses_nothing() -> None:
    free = scenario("stream-generic-free", "3.2", IDENTITY)
    later = scenario("later", "4.1", IDENTITY)
    results = [(free, failed(free, COPY)), (later, failed(later, COPY))]
    assert set(attribute(results, LABS)) == {"later"}
    assert attribute(results, LABS, lambda case: 0.0 if case.id.startswith("stream-generic") else 1.0) == {}


def test_the_evidence_must_share_a_clause_with_the_case_it_excuses() -> None:
    evidence = scenario("evidence", "3.2", IDENTITY, clauses=("STREAM-2",))
    own_clause = scenario("context-only", "4.1", IDENTITY, clauses=("IR-CTX-1",))
    # "A ScriptedModel plays through the lab 3.2 stream" is no shared clause: only a cited one is.
    restated = scenario("restated", "4.1", IDENTITY, clauses=("SM-JSON-1",))
    cited = scenario("cited", "4.1", IDENTITY, clauses=("SM-DONE-1", "STREAM-2"))
    results = [(case, failed(case, COPY)) for case in (evidence, own_clause, restated, cited)]
    assert set(attribute(results, LABS)) == {"cited"}


def test_inherited_cases_earn_only_what_their_labs_own_cases_earn() -> None:
    rubric = parse_rubric({"version": 1, "name": "two labs", "labs": {"3.2": {"weight": 20}, "4.1": {"weight": 30}}}, "test")
    evidence = scenario("evidence", "3.2", IDENTITY)
    excused = [scenario(f"excused-{n}", "4.1", IDENTITY) for n in range(3)]
    own = [scenario(f"own-{n}", "4.1", {"value": 1}) for n in range(3)]

    def graded(own_passing: int) -> Score:
        results = [(evidence, failed(evidence, COPY)), *((case, failed(case, COPY)) for case in excused)]
        for index, case in enumerate(own):
            results.append((case, Outcome(case.id, "passed", "", 0.0) if index < own_passing else failed(case, {"value": 2})))
        return score(rubric, results)

    # Every own case passes: the bug is charged once, in lab 3.2, and lab 4.1 keeps all 30 points.
    assert graded(3).lab("4.1").points == 30  # type: ignore[union-attr]
    # One of three own cases passes: the excused half of the lab earns a third of its points.
    assert graded(1).lab("4.1").points == pytest.approx(15 / 3 + 15 / 3)  # type: ignore[union-attr]
    lab_4 = [case for case in graded(1).cases if case.inherited is not None]
    assert len(lab_4) == 3 and all(case.points == pytest.approx(5 / 3) for case in lab_4)
    assert "here it earns 33% of its points" in lab_4[0].inherited.explanation()  # type: ignore[union-attr]
    # Nothing of lab 4.1's own works: attribution gives it nothing.
    assert graded(0).lab("4.1").points == 0  # type: ignore[union-attr]
    alone = score(rubric, [(evidence, failed(evidence, COPY)), *((case, failed(case, COPY)) for case in excused)])
    assert alone.lab("4.1").points == 0 and alone.lab("4.1").inherited == 3  # type: ignore[union-attr]


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


# -- drills: attribution laundering ---------------------------------------------------------


@pytest.fixture(scope="module")
def laundering_scores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Score]:
    """The default rubric's score of each laundering project (tests/support/laundering_projects.py)."""
    require("needs_node")
    context = prepare(load_rubric())
    root = tmp_path_factory.mktemp("laundering")
    scores = {}
    for name in (*CHEATS, HONEST):
        project = make_laundering_project(name, root / name)
        result = grade_submission(f"pi-course:{project}", context, GradeOptions(build=False), name=name)
        assert result.status == "ok", result.detail
        scores[name] = result.score
    return scores


@pytest.mark.parametrize("name", CHEATS)
@needs_node
def test_a_junk_scripted_model_earns_nothing_in_lab_4(laundering_scores: dict[str, Score], name: str) -> None:
    score = laundering_scores[name]
    assert all(graded.outcome.status != "passed" for graded in score.cases if graded.case.lab in ("4.1", "4.2"))
    assert {lab: score.lab(lab).points for lab in ("4.1", "4.2")} == {"4.1": 0, "4.2": 0}  # type: ignore[union-attr]
    # Breaking earlier cases on purpose never pays: no more than the same real code, honestly submitted.
    assert score.points <= laundering_scores[HONEST].points


@needs_node
def test_the_honest_junk_model_keeps_its_lab_3_points(laundering_scores: dict[str, Score]) -> None:
    score = laundering_scores[HONEST]
    assert {lab.lab: lab.points for lab in score.labs} == {"3.1": 25, "3.2": 25, "4.1": 0, "4.2": 0}


def test_a_list_with_alternatives_is_described_against_the_closest_one() -> None:
    either: JsonValue = {"$oneOf": [[{"type": "start"}, {"type": "error"}], [{"type": "error"}]]}
    case = scenario("c", "4.2", {"events": either}, action="consume")
    assert symptoms(case, {"steps": [{"events": []}]}) == {
        "consume: events has 0 items, fewer than expected (first difference: events[0](start))"
    }
    assert symptoms(case, {"steps": [{"events": [{"type": "done"}]}]}) == {"consume: events[0](error).type"}


def test_summaries_say_what_excused_cases_cost_when_it_is_not_nothing() -> None:
    rubric = parse_rubric({"version": 1, "name": "two labs", "labs": {"3.2": {"weight": 20}, "4.1": {"weight": 30}}}, "test")
    evidence = scenario("evidence", "3.2", IDENTITY)
    excused = [scenario(f"excused-{n}", "4.1", IDENTITY) for n in range(3)]
    own = [scenario(f"own-{n}", "4.1", {"value": 1}) for n in range(3)]
    clauses = load_clauses()

    def reports(own_passing: int, held_out: frozenset[str] = frozenset()) -> dict[str, str]:
        results = [(evidence, failed(evidence, COPY)), *((case, failed(case, COPY)) for case in excused)]
        for index, case in enumerate(own):
            results.append((case, Outcome(case.id, "passed", "", 0.0) if index < own_passing else failed(case, {"value": 2})))
        chosen = dataclasses.replace(rubric, held_out=held_out)
        result = SubmissionResult("student", "x", "x", "ok", "", score(chosen, results), chosen, 1.0)
        return {
            "terminal": terminal.render(result, clauses),
            "markdown": markdown.render(result, clauses),
            "html": html.unescape(submission_page(result, clauses, for_students=False)),
            "student html": html.unescape(submission_page(result, clauses, for_students=True)),
        }

    # One of three own cases passes: each excused case earns a third of its 5 points, so the three cost 10.
    partial = reports(1)
    assert "3 excused (failed because of an earlier lab, 10.00 points lost" in partial["terminal"]
    assert "these cost 10.00 points here: each earns only its lab's own pass rate" in partial["terminal"]
    assert "3 failed only because of an earlier lab's bug (these cost 10.00 points here: each earns only" in partial["markdown"]
    assert partial["html"].count("these cost 10.00 points here") == 2  # the heading and the group
    assert all("no points" not in text and "cost nothing" not in text for text in partial.values())
    # Every own case passes: then they do cost nothing, and say so.
    full = reports(3)
    assert "3 excused (failed because of an earlier lab, no points lost" in full["terminal"]
    assert "these cost no points here" in full["terminal"] and "these cost no points here" in full["markdown"]
    assert "these cost no points here" in full["html"]
    # A student's page with held-out cases says the rule, not the number (it would tell how the held-out cases did).
    hidden = reports(1, frozenset({"own-2"}))["student html"]
    assert "each earns here the share of its points that its lab's own cases earn" in hidden and "10.00" not in hidden


def test_failure_group_headings_count_in_the_singular_too() -> None:
    rubric = parse_rubric({"version": 1, "name": "one lab", "labs": {"4.1": {"weight": 10}}}, "test")
    case = scenario("only", "4.1", {"value": 1})
    result = SubmissionResult("student", "x", "x", "ok", "", score(rubric, [(case, failed(case, {"value": 2}))]), rubric, 1.0)
    assert "Failures by cause (1 case in 1 group)" in submission_page(result, load_clauses(), for_students=False)
    page = implementation_body("impl", [(case, failed(case, {"value": 2}))], load_clauses())
    assert "Failures by cause (1 case in 1 group)" in page
