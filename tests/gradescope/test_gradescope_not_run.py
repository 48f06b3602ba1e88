"""results.json for a submission none of whose cases ran: one test with the reason, "start here", then "not run" per lab."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from conformance.gradescope import results as gradescope
from conformance.grading.grader import GradeOptions, SubmissionResult, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from tests.support.gradescope_format import problems


def _graded(folder: Path, keep: int | None = None) -> tuple[SubmissionResult, Any]:
    context = prepare(load_rubric())
    if keep is not None:
        context = dataclasses.replace(context, cases=context.cases[:keep])
    result = grade_submission(f"pi-course:{folder}", context, GradeOptions(build=False))
    document = gradescope.results(result, context.clauses)
    assert problems(document) == []
    return result, document


def test_an_empty_submission_is_one_reason_first_and_one_not_run_test_per_lab(tmp_path: Path) -> None:
    result, document = _graded(tmp_path)
    assert result.status == "not-a-project"
    tests = document["tests"]
    assert isinstance(tests, list)
    first, *labs = tests
    assert first["name"] == "start here: there is no project to grade" and first["output"].startswith("start here: there is no project")
    assert result.detail in first["output"] and first["max_score"] == 100
    assert [test["name"] for test in labs] == ["lab 3.1: not run", "lab 3.2: not run", "lab 4.1: not run", "lab 4.2: not run"]
    assert all(test["score"] == 0 and test["status"] == "failed" and "see the first test" in test["output"] for test in labs)
    assert str(document["output"]).startswith("start here: there is no project to grade")
    assert len(json.dumps(document)) < 4000


def test_its_size_does_not_grow_with_the_cases(tmp_path: Path) -> None:
    _, every_case = _graded(tmp_path)
    _, some_cases = _graded(tmp_path, keep=40)
    assert len(every_case["tests"]) == len(some_cases["tests"]) == 5


def test_a_build_failure_carries_its_log_in_the_first_test(tmp_path: Path) -> None:
    result, _ = _graded(tmp_path)
    failed = dataclasses.replace(result, status="build-failed", detail="tsc: 2 errors", build_report="src/types.ts(3,1): error TS1005")
    built: Any = gradescope.results(failed, {})
    first = built["tests"][0]
    assert first["name"] == "start here: the build failed"
    assert first["output"].splitlines()[0] == "start here: the build failed: tsc: 2 errors"
    assert "src/types.ts(3,1): error TS1005" in first["output"] and "build log" in str(built["output"])
