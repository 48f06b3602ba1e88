"""Gradescope tests say which of five states a case is in: passed, excused, not run, skipped, failed.

Gradescope's ``status`` is only ``passed`` or ``failed``: the state is the test's name prefix,
its output's first line and one of its tags; and a lab's terminal line says what its points are made of.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance.common.jsontypes import JsonValue
from conformance.gradescope import results as gradescope
from conformance.gradescope.case_state import CASE_STATES
from conformance.grading.grader import SubmissionResult, grade_submission, prepare
from conformance.grading.rubric import load_rubric, parse_rubric
from conformance.grading.scoring import score
from conformance.judging.outcome import Divergence, Outcome
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from conformance.reports.formats import terminal
from conformance.running.engine import NOT_RUN
from tests.support.gradescope_format import problems

IDENTITY: Mapping[str, JsonValue] = {"state": "resolved", "same_object_as": "terminal_event"}
COPY: Mapping[str, JsonValue] = {"state": "resolved", "same_object_as": None}


def case(case_id: str, lab: str, expect: Mapping[str, JsonValue]) -> Case:
    step: dict[str, JsonValue] = {"action": "result", "expect": dict(expect)}
    return Case(case_id, "scratch.yaml", 1, "04", lab, ("SM-DONE-1",), "scratch", "scripted_model", {}, steps=(step,))


def failed(graded: Case, observed: Mapping[str, JsonValue]) -> Outcome:
    divergence = Divergence("steps[0].x", "1", "2")
    return Outcome(graded.id, "failed", "x", 0.0, divergence=divergence, step_index=0, observation={"steps": [dict(observed)]})


def graded_document(own_only: bool = False) -> tuple[dict[str, Any], str]:
    """Lab 3.2's bug fails its own case and excuses two of lab 4.1's; 4.1 also has a pass, a skip and a case not run
    (``own_only``: its own case passes, and nothing else is in it)."""
    rubric = parse_rubric({"version": 1, "name": "two labs", "labs": {"3.2": {"weight": 20}, "4.1": {"weight": 30}}}, "test")
    evidence, excused = case("evidence", "3.2", IDENTITY), [case(f"excused-{n}", "4.1", IDENTITY) for n in range(2)]
    own, skipped, late = case("own", "4.1", {"value": 1}), case("skipped", "4.1", {"value": 1}), case("late", "4.1", {"value": 1})
    results = [
        (evidence, failed(evidence, COPY)),
        *((excused_case, failed(excused_case, COPY)) for excused_case in excused),
        (own, Outcome(own.id, "passed", "", 0.0)),
        (skipped, Outcome(skipped.id, "skipped", "not implemented: ScriptedModel is not exported", 0.0)),
        (late, Outcome(late.id, "errored", f"{NOT_RUN}the submission used up its 60 s budget", 0.0)),
    ][: 4 if own_only else None]
    result = SubmissionResult("student", "x", "x", "ok", "", score(rubric, results), rubric, 1.0)
    document: Any = gradescope.results(result, load_clauses())
    assert problems(document) == []
    return {test["name"]: test for test in document["tests"]}, terminal.render(result, load_clauses())


def test_each_state_is_named_said_first_and_tagged() -> None:
    tests, _ = graded_document()
    assert set(tests) == {"evidence", "excused: excused-0", "excused: excused-1", "own", "skipped: skipped", "not run: late"}
    for test in tests.values():
        state = next(state for state in CASE_STATES if test["output"].startswith(state))
        assert state in test["tags"] and test["output"].count(test["output"].splitlines()[0]) == 1, test
    assert tests["own"]["status"] == "passed" and tests["own"]["output"] == "passed"
    assert tests["evidence"]["status"] == "failed" and tests["evidence"]["output"].startswith("failed: it earns 0.00 of 20.00 points")
    skipped, late = tests["skipped: skipped"], tests["not run: late"]
    assert skipped["status"] == "failed"
    assert skipped["output"].startswith("skipped (not implemented): ScriptedModel is not exported (it earns 0.00")
    assert late["status"] == "failed" and late["output"].startswith("not run: the submission used up its 60 s budget (it earns 0.00 of")


def test_an_excused_case_says_why_and_what_it_earns() -> None:
    tests, _ = graded_document()
    excused = tests["excused: excused-0"]
    # Lab 4.1's own cases pass one of three: an excused case earns that share of its points, and is not green.
    earns = f"{excused['score']:.2f} of {excused['max_score']:.2f} points"
    assert excused["output"].splitlines()[0] == f"excused: an earlier lab's bug (lab 3.2) explains this failure; it earns {earns} here"
    assert 0 < excused["score"] < excused["max_score"] and excused["status"] == "failed"
    assert "fails because of lab 3.2" in excused["output"]


def test_a_labs_line_says_what_its_points_are_made_of() -> None:
    _, text = graded_document()
    line = next(line for line in text.splitlines() if line.strip().startswith("lab 4.1"))
    # The case never run is "not run", as on Gradescope, not "errored": each case is counted once, in its state.
    assert "1/5 passed, 1 skipped, 1 not run, 2 excused (failed because of an earlier lab," in line, line


def test_an_excused_case_that_costs_nothing_is_green() -> None:
    tests, _ = graded_document(own_only=True)
    excused = tests["excused: excused-0"]
    assert excused["score"] == excused["max_score"] > 0 and excused["status"] == "passed"
    assert excused["output"].startswith("excused: an earlier lab's bug (lab 3.2) explains this failure; it earns")


def test_a_skeleton_binding_is_skipped_as_not_implemented_in_every_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An empty binding implements nothing: every test says so, none reads as a failure or a throw
    # (chapter 05's conversions once reported a missing function as "threw").
    (tmp_path / "skeleton_port.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    context = prepare(load_rubric())
    document: Any = gradescope.results(grade_submission("python:skeleton_port", context), context.clauses)
    states = {test["output"].split(":")[0] for test in document["tests"]}
    assert states == {"skipped (not implemented)"}, states
    tests = document["tests"]
    assert all(test["name"].startswith("skipped: ") and "not implemented: not implemented" not in test["output"] for test in tests)
    labs = set(load_rubric().labs)
    assert {tag for test in document["tests"] for tag in test["tags"] if tag.startswith("lab ")} == {f"lab {lab}" for lab in labs}
