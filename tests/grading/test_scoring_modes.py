"""Per-clause weighting and a per-cause cap, computed beside the rubric's per-case points."""

from __future__ import annotations

import pytest

from conformance.cases import Case
from conformance.clauses import load_clauses
from conformance.execution import Outcome
from conformance.grading.rubric import load_rubric
from conformance.grading.scoring import Score, score
from conformance.grading.scoring_modes import lab_points
from conformance.loader import load_suite
from conformance.matcher import Divergence


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
