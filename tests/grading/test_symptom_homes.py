"""Inside a chapter a symptom's site is charged where it costs most (conformance/grading/symptom_homes.py)."""

from __future__ import annotations

from collections.abc import Mapping

from conformance.common.jsontypes import JsonValue
from conformance.grading.attribution import attribute
from conformance.grading.grader import SubmissionResult
from conformance.grading.rubric import parse_rubric
from conformance.grading.scoring import score
from conformance.grading.symptom_homes import chapter_of, site, symptom_homes
from conformance.judging.outcome import Divergence, Outcome
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from conformance.reports.formats import markdown, terminal

LABS = ("3.1", "3.2", "4.1", "4.2")
IDENTITY: dict[str, JsonValue] = {"state": "resolved", "same_object_as": "terminal_event"}
COPY: dict[str, JsonValue] = {"state": "resolved", "same_object_as": None}


def scenario(case_id: str, lab: str, expect: Mapping[str, JsonValue]) -> Case:
    steps: tuple[dict[str, JsonValue], ...] = ({"action": "result", "expect": dict(expect)},)
    return Case(case_id, "scratch.yaml", 1, lab.split(".")[0], lab, ("SM-DONE-1",), "scratch", "scripted_model", {}, steps=steps)


def failed(case: Case, observed: Mapping[str, JsonValue]) -> Outcome:
    divergence = Divergence("steps[0].x", "1", "2")
    return Outcome(case.id, "failed", "x", 0.0, divergence=divergence, step_index=0, observation={"steps": [dict(observed)]})


def test_a_site_is_the_action_and_the_observation_key() -> None:
    assert site("consume: events[0](start).partial.content") == "consume: events"
    assert site("consume: events has 0 items, fewer than expected (first difference: events[0](start))") == "consume: events"
    assert site("result: same_object_as") == "result: same_object_as"
    assert chapter_of("4.2") == "4" and chapter_of("messages") == "messages"


def _failures(lab: str, count: int, prefix: str) -> list[tuple[Case, Outcome]]:
    cases = [scenario(f"{prefix}-{n}", lab, IDENTITY) for n in range(count)]
    return [(case, failed(case, COPY)) for case in cases]


def test_one_planted_earlier_failure_excuses_no_dearer_later_ones_and_is_itself_excused() -> None:
    plant, real = _failures("4.1", 1, "plant"), _failures("4.2", 3, "real")
    excused = attribute([*plant, *real], LABS)
    assert set(excused) == {"plant-0"} and excused["plant-0"].lab == "4.2" and not excused["plant-0"].earlier


def test_a_real_earlier_bug_dearer_than_its_later_failures_is_charged_where_it_is() -> None:
    own, later = _failures("4.1", 3, "own"), _failures("4.2", 3, "later")
    assert set(attribute([*own, *later], LABS)) == {"later-0", "later-1", "later-2"}  # a tie stays in the earlier lab
    assert set(attribute([*own, *later[:2]], LABS)) == {"later-0", "later-1"}


def test_each_failure_pays_a_share_per_site_so_one_plant_cannot_buy_two_bugs() -> None:
    two_sites: dict[str, JsonValue] = {**IDENTITY, "value": 1}
    plant = scenario("plant", "4.1", two_sites)
    results = [(plant, failed(plant, {**COPY, "value": 2}))]
    results += [(case, failed(case, COPY)) for case in (scenario("identity-bug", "4.2", IDENTITY),)]
    value_bug = scenario("value-bug", "4.2", {"state": "resolved", "value": 1})
    results.append((value_bug, failed(value_bug, {"state": "resolved", "value": 2})))
    # The plant's one case weighs half at each site: each real 4.2 failure weighs a whole one.
    costs = symptom_homes(((case, frozenset({"result: same_object_as"})) for case, _ in results[:2]), LABS, lambda _case: 1.0)
    assert costs == {("4", "result: same_object_as"): "4.1"}  # without the split, a tie: the earlier lab
    assert set(attribute(results, LABS)) == {"plant"}


def test_across_chapters_the_earlier_lab_still_explains_unless_isolated() -> None:
    earlier, later = _failures("3.2", 1, "stream"), _failures("4.1", 5, "model")
    assert len(attribute([*earlier, *later], LABS)) == 5  # a lab 3.2 bug seen by many lab 4 cases: charged in 3.2
    assert attribute([*earlier, *later], LABS, isolated={"4.1": frozenset({"3.1", "3.2"})}) == {}


def test_reports_say_a_later_lab_when_the_excusing_bug_is_charged_in_a_later_lab() -> None:
    # Issue 32, item 5: terminal and Markdown said "because of an earlier lab" for a case that a
    # later lab's bug (the symptom's home inside the chapter) excuses; Gradescope said it right.
    rubric = parse_rubric({"version": 1, "name": "two labs", "labs": {"4.1": {"weight": 50}, "4.2": {"weight": 50}}}, "test")
    # The plant is one of five 4.1 cases (10 points); the three real 4.2 failures weigh 50: their lab is the home.
    passing = [scenario(f"own-{n}", "4.1", IDENTITY) for n in range(4)]
    results = [*_failures("4.1", 1, "plant"), *((case, Outcome(case.id, "passed", "", 0.0)) for case in passing)]
    results += _failures("4.2", 3, "real")
    result = SubmissionResult("student", "x", "x", "ok", "", score(rubric, results), rubric, 1.0)
    assert [graded.inherited.earlier for graded in result.score.cases if graded.inherited is not None] == [False]
    texts = {"terminal": terminal.render(result, load_clauses()), "markdown": markdown.render(result, load_clauses())}
    assert "1 excused (failed because of a later lab," in texts["terminal"]
    assert "failing because of a later lab's bug (charged once, in that lab;" in texts["terminal"]
    assert "1 failed only because of a later lab's bug" in texts["markdown"]
    assert all("because of an earlier lab" not in text for text in texts.values())
