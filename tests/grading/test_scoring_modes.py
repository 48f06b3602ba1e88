"""Per-clause weighting and a per-cause cap: chosen in a rubric (scoring_mode), and computed beside the per-case points."""

from __future__ import annotations

import json

import pytest
import yaml

from conformance.grading.grader import SubmissionResult
from conformance.grading.rubric import DEFAULT_RUBRIC, RubricError, load_rubric, parse_rubric
from conformance.grading.scoring import Score, score
from conformance.grading.scoring_modes import lab_points
from conformance.judging.outcome import Divergence, Outcome
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from conformance.reports.formats import json_report, markdown, terminal


def _scored(failing: set[str]) -> tuple[list[Case], Score]:
    rubric = load_rubric()
    cases = [case for case in load_suite(None, load_clauses()).cases if rubric.selects(case)]
    outcomes = []
    for case in cases:
        if case.id in failing:
            divergence = Divergence("value.timestamp", "10", "30")
            outcomes.append(Outcome(case.id, "failed", str(divergence), 0.0, divergence=divergence))
        else:
            outcomes.append(Outcome(case.id, "passed", "", 0.0))
    return cases, score(rubric, zip(cases, outcomes, strict=True))


def test_every_mode_gives_full_marks_when_everything_passes() -> None:
    _, scored = _scored(set())
    for mode in ("per-case", "per-clause", "capped"):
        assert sum(lab_points(scored, mode).values()) == pytest.approx(scored.max_points)


def test_per_clause_weighs_each_clause_the_same_and_a_cap_bounds_one_cause() -> None:
    cases = [case for case in load_suite(None, load_clauses()).cases if case.lab == "3.1" and case.operation == "current_system_message"]
    failing = {case.id for case in cases}
    all_cases, scored = _scored(failing)
    lab = next(lab for lab in scored.labs if lab.lab == "3.1")
    weighted = [graded for graded in scored.cases if graded.case.lab == "3.1" and graded.max_points > 0]
    clauses = {clause for graded in weighted for clause in graded.case.clauses}
    expected = sum(
        lab.max_points / len(clauses) * sum(g.case.id not in failing for g in members) / len(members)
        for clause in clauses
        if (members := [graded for graded in weighted if clause in graded.case.clauses])
    )
    assert lab_points(scored, "per-clause")["3.1"] == pytest.approx(expected)
    assert lab.max_points - lab_points(scored, "capped", cap=0.1)["3.1"] == pytest.approx(0.1 * lab.max_points)
    assert lab_points(scored, "per-case")["3.1"] == pytest.approx(lab.points)
    assert lab.points < lab_points(scored, "capped", cap=0.1)["3.1"]
    assert len(all_cases) > len(cases)


def test_an_unknown_mode_is_refused() -> None:
    _, scored = _scored(set())
    with pytest.raises(ValueError, match="unknown scoring mode"):
        lab_points(scored, "per-vibe")


def _rescored(mode: str, failing: set[str], **extra: object) -> tuple[Score, Score]:
    """The per-case score of ``failing`` under the default rubric, and its score under the same rubric with ``scoring_mode: mode``."""
    _, per_case = _scored(failing)
    data = {**yaml.safe_load(DEFAULT_RUBRIC.read_text(encoding="utf-8")), "scoring_mode": mode, **extra}
    pairs = [(graded.case, graded.outcome) for graded in per_case.cases]
    return per_case, score(parse_rubric(data), pairs)


SYSTEM_MESSAGE_CASES = {
    case.id for case in load_suite(None, load_clauses()).cases if case.lab == "3.1" and case.operation == "current_system_message"
}


def test_the_default_rubric_scores_per_case_as_before() -> None:
    assert load_rubric().scoring_mode == "per-case"
    per_case, explicit = _rescored("per-case", SYSTEM_MESSAGE_CASES)
    assert explicit == per_case


@pytest.mark.parametrize("mode", ["per-clause", "capped"])
def test_a_rubric_chooses_its_scoring_mode_and_case_points_still_add_up(mode: str) -> None:
    # These failures cost lab 3.1 a third of its points: a cap of 10 % bounds them.
    cap = 0.1
    per_case, chosen = _rescored(mode, SYSTEM_MESSAGE_CASES, **({"cause_cap": cap} if mode == "capped" else {}))
    lab = chosen.lab("3.1")
    assert lab is not None and lab.points != pytest.approx(per_case.lab("3.1").points)  # type: ignore[union-attr]
    # The same numbers as the side-by-side comparison (bench/scoring_spread.py) computes.
    assert lab.points == pytest.approx(lab_points(per_case, mode, cap)["3.1"])
    for scored_lab in chosen.labs:
        cases = [graded for graded in chosen.cases if graded.case.lab == scored_lab.lab]
        assert sum(graded.points for graded in cases) == pytest.approx(scored_lab.points)
        assert sum(graded.max_points for graded in cases) == pytest.approx(scored_lab.max_points)
    assert chosen.lab("3.2") == per_case.lab("3.2") or mode == "per-clause"


def test_a_cap_bounds_what_one_cause_costs_in_a_lab() -> None:
    per_case, capped = _rescored("capped", SYSTEM_MESSAGE_CASES, cause_cap=0.1)
    before, after = per_case.lab("3.1"), capped.lab("3.1")
    assert before is not None and after is not None
    assert before.max_points - before.points > 0.1 * before.max_points
    assert after.max_points - after.points == pytest.approx(0.1 * after.max_points)
    # Each of the cause's cases gives back the same share of what it lost; passed cases are untouched.
    lost = {graded.case.id: graded.max_points - graded.points for graded in capped.cases if graded.case.id in SYSTEM_MESSAGE_CASES}
    assert len({round(value, 9) for value in lost.values()}) == 1 and all(value > 0 for value in lost.values())


def test_a_cause_under_the_cap_costs_what_it_costs() -> None:
    one = {sorted(SYSTEM_MESSAGE_CASES)[0]}
    per_case, capped = _rescored("capped", one)
    assert capped.labs == per_case.labs


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"scoring_mode": "per-vibe"}, "scoring_mode"),
        ({"scoring_mode": "capped", "cause_cap": 0}, "cause_cap"),
        ({"scoring_mode": "capped", "cause_cap": 1.5}, "cause_cap"),
        ({"cause_cap": 0.3}, "scoring_mode"),
        ({"scoring_mode": "per-clause", "cause_cap": 0.3}, "scoring_mode"),
    ],
)
def test_a_rubric_with_an_unusable_scoring_mode_is_refused(extra: dict[str, object], says: str) -> None:
    data = {"version": 1, "labs": {"3.1": {"weight": 10}}, **extra}
    with pytest.raises(RubricError, match=says):
        parse_rubric(data)
    assert parse_rubric({"version": 1, "labs": {"3.1": {"weight": 10}}, "scoring_mode": "capped", "cause_cap": 0.25}).cause_cap == 0.25


def test_reports_say_how_a_rubric_that_is_not_per_case_scores() -> None:
    data = {"version": 1, "name": "capped", "labs": {"3.1": {"weight": 10}}, "scoring_mode": "capped", "cause_cap": 0.25}
    rubric = parse_rubric(data)
    _, per_case = _scored(set())
    result = SubmissionResult("s", "reference", "reference", "ok", "", per_case, rubric, 1.0)
    clauses = load_clauses()
    assert "rubric: capped (one cause costs at most 25% of a lab's points)" in terminal.render(result, clauses)
    assert "- rubric: capped (one cause costs at most 25% of a lab's points)" in markdown.render(result, clauses)
    assert json.loads(json_report.render(result, clauses))["rubric"] | {"source": ""} == {
        "name": "capped",
        "source": "",
        "scoring_mode": "capped",
        "cause_cap": 0.25,
    }
    per_case_result = SubmissionResult("s", "reference", "reference", "ok", "", per_case, load_rubric(), 1.0)
    assert f"rubric: {load_rubric().name}   sandbox" in terminal.render(per_case_result, clauses)
