"""Visible output never depends on held-out outcomes (issue 32, item 4).

Two submissions that differ only in how the held-out cases go (``tests/support/held_out_probe.py``)
must produce byte-identical output wherever students look before grades are published: every
visible Gradescope test (score, status, feedback), the Gradescope summary, the feedback of every
visible case in the Markdown, terminal and JSON reports, and the students' HTML page.
"""

from __future__ import annotations

import json
import re

import pytest

from conformance.feedback.case_feedback import case_feedback
from conformance.gradescope import results as gradescope
from conformance.grading.grader import GradingContext, SubmissionResult, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.reports.formats import json_report
from conformance.reports.html.submission_page import submission_page
from tests.support import held_out_probe
from tests.support.held_out_set import write_held_out
from tests.support.paths import REPO


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> GradingContext:
    folder = tmp_path_factory.mktemp("private")
    # Lab 4.2 cases, most of which the steady submission passes: junk there
    # lowers lab 4.2's pass rate, which excused visible lab 4.2 cases used to earn.
    write_held_out(folder, count=6, source=REPO / "fixtures" / "ch04" / "exhaustion.yaml")
    return prepare(load_rubric(), held_out=folder)


def _graded(context: GradingContext, name: str) -> SubmissionResult:
    held_out_probe.reset()
    return grade_submission(f"python:tests.support.held_out_probe:{name}", context, name="student")


def _what_students_see(result: SubmissionResult, context: GradingContext) -> dict[str, str]:
    data = gradescope.results(result, context.clauses)
    tests = data["tests"]
    assert isinstance(tests, list)
    visible_tests = [test for test in tests if isinstance(test, dict) and test["visibility"] == "visible"]
    report = json_report.document(result, context.clauses)
    # Every field but the time a case took.
    cases = report["cases"]
    assert isinstance(cases, list)
    visible_json = [
        {key: value for key, value in case.items() if key != "duration_s"}
        for case in cases
        if isinstance(case, dict) and not case["held_out"]
    ]
    # Durations and the clock (an error turn's default timestamp) differ from run to run anyway.
    page = re.sub(r"\b1\d{12}\b|\d+(\.\d+)? ?m?s\b", "<time>", submission_page(result, context.clauses, for_students=True))
    return {
        "gradescope tests": json.dumps(visible_tests, ensure_ascii=False, sort_keys=True),
        "gradescope summary": str(data["output"]),
        "feedback": "\n".join(case_feedback(graded, context.clauses) for graded in result.score.cases if not graded.held_out),
        "json cases": json.dumps(visible_json, ensure_ascii=False, sort_keys=True),
        "student page": page,
    }


def test_two_submissions_differing_only_in_held_out_cases_look_the_same_before_publication(context: GradingContext) -> None:
    steady, saboteur = _graded(context, "steady"), _graded(context, "saboteur")
    # The drill has teeth: the held-out phase really differs, and visible cases really are excused.
    held_passed = [sum(graded.passed for graded in result.score.cases if graded.held_out) for result in (steady, saboteur)]
    assert held_passed[0] > held_passed[1] == 0
    excused = [graded for graded in steady.score.cases if graded.inherited is not None and not graded.held_out]
    assert excused and all(graded.case.lab == "4.2" for graded in excused)
    seen, other = _what_students_see(steady, context), _what_students_see(saboteur, context)
    for where, text in seen.items():
        assert text == other[where], f"{where} differs with the held-out phase alone"
    # The held-out cases still count, after publication.
    assert saboteur.score.points < steady.score.points
