"""Output a submission writes outside the protocol is mentioned once, as a note, and costs nothing (issue 37, item 5)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from conformance.adapters.stray_output import StrayOutput
from conformance.gradescope import results as gradescope
from conformance.grading.grader import GradeOptions, SubmissionResult, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.reports.formats import json_report, markdown, terminal
from tests.support.paths import REPO
from tests.support.requirements import needs_node

CORRECT = REPO / "tests" / "support" / "js" / "course-correct"


def _graded(folder: Path) -> tuple[SubmissionResult, object]:
    context = prepare(load_rubric())
    context = dataclasses.replace(context, cases=tuple([case for case in context.cases if case.lab in ("3.1", "4.1")][:40]))
    return grade_submission(f"pi-course:{folder}", context, GradeOptions(build=False)), context


@needs_node
def test_a_stray_console_log_is_a_note_in_every_report_and_costs_nothing(tmp_path: Path) -> None:
    chatty = tmp_path / "chatty"
    shutil.copytree(CORRECT, chatty)
    module = chatty / "packages" / "pi-course" / "dist" / "src" / "types.js"
    module.write_text('console.log("debug: types loaded");\nconsole.error("and \\u001b[31mred");\n' + module.read_text(encoding="utf-8"))
    noisy, context = _graded(chatty)
    quiet, _ = _graded(CORRECT)
    assert noisy.score.points == quiet.score.points and noisy.score.passed == quiet.score.passed == quiet.score.total > 0
    assert quiet.notes == ()
    (note,) = noisy.notes
    assert note.startswith("Your code wrote to stdout or stderr 2 times while the cases ran (the first: 'debug: types loaded')")
    clauses = context.clauses  # type: ignore[attr-defined]
    assert f"note: {note}" in terminal.render(noisy, clauses)
    assert "## Notes" in markdown.render(noisy, clauses)
    assert json.loads(json_report.render(noisy, clauses))["notes"] == [note]
    assert "note: Your code wrote" in str(gradescope.results(noisy, clauses)["output"])
    assert "\x1b" not in terminal.render(noisy, clauses)


def test_the_count_adds_up_and_quotes_the_first_write_bounded_and_scrubbed() -> None:
    stray = StrayOutput()
    assert stray.summary() is None
    stray.note({"writes": 2, "first": "a\n  b" + "x" * 500})
    stray.note({"writes": 1, "first": "later"})
    for junk in (None, {"writes": True, "first": ""}, {"writes": 0, "first": "z"}, {"writes": 3}, "text"):
        stray.note(junk)
    summary = stray.summary()
    assert summary is not None and summary.startswith("Your code wrote to stdout or stderr 3 times") and "'a b" in summary
    assert "later" not in summary and len(summary) < 400


@pytest.mark.parametrize("writes, words", [(1, "once"), (4, "4 times")])
def test_the_note_counts_in_words(writes: int, words: str) -> None:
    stray = StrayOutput()
    stray.note({"writes": writes, "first": "x"})
    assert f"stderr {words} while" in (stray.summary() or "")
