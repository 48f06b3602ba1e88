"""The Markdown report: a score table, the failing cases one line per cause, then each cause with its first case's full feedback.

The cause lines are the terminal's (:mod:`conformance.reports.formats.causes`), with every
case id. One cause (a place and a kind of divergence, or a module that ends the process on
import, a timeout, a crash) reads the same in every case it fails: within a lab its first case
is shown in full and the others only by id, not fifty near-identical blocks.
"""

from __future__ import annotations

from collections.abc import Mapping

from conformance.common.student_text import markdown_code, markdown_fence, markdown_text, scrub
from conformance.feedback.case_feedback import case_feedback, inherited_line
from conformance.feedback.featured import not_passed_by_lab
from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase, LabScore
from conformance.grading.status import NOT_STARTED
from conformance.judging.failure_groups import Cause, cause_of
from conformance.model.clauses import Clause
from conformance.reports.formats import causes
from conformance.reports.formats.common import excused_cost, excusing_lab, points, profile_of, skipped_reasons


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fence(text: str) -> str:
    # A fence longer than any backtick run inside, so student output cannot close it early.
    return markdown_fence(text)


def render(result: SubmissionResult, clauses: Mapping[str, Clause]) -> str:
    """The report as Markdown (a profile other than the course's is named, its groups called areas).

    Student text is fenced or escaped: it cannot add a heading, a table row or a link of its own.
    """
    lines = [*_summary(result), *_score_table(result)]
    if result.notes:
        lines += ["", "## Notes", "", *(f"- {markdown_text(note)}" for note in result.notes)]
    if result.build_report:
        lines += ["", "## Build output", "", _fence(result.build_report)]
    failing = not_passed_by_lab(result)
    skipped = not_passed_by_lab(result, ("skipped",))
    if failing and result.status not in NOT_STARTED:
        found = causes.cause_lines(result, clauses)
        lines += ["", f"## {causes.heading(found).capitalize()}", ""]
        lines += [f"- {line.render(result.rubric.group_label, None, markdown_code, markdown_text)}" for line in found]
    for lab in result.score.labs:
        if lab.lab in failing or lab.lab in skipped or lab.inherited:
            lines += _lab_section(result, clauses, lab, failing.get(lab.lab, []), skipped.get(lab.lab, []))
    return scrub("\n".join(lines) + "\n")


def _summary(result: SubmissionResult) -> list[str]:
    """The title, the total and how the submission was graded."""
    profile = profile_of(result)
    return [
        f"# pi-conformance grade: {markdown_text(result.name)}",
        "",
        f"**Total: {points(result.score.points)} / {points(result.score.max_points)}** "
        f"({result.score.passed}/{result.score.total} cases passed)",
        "",
        f"- status: `{result.status}`" + (f": {markdown_text(result.detail)}" if result.detail else ""),
        f"- implementation: {markdown_code(result.implementation)} ({markdown_code(result.impl)})",
        *([f"- profile: `{profile}`"] if profile else []),
        f"- rubric: {result.rubric.name}" + (f" ({result.rubric.scoring_note})" if result.rubric.scoring_note else ""),
        f"- sandbox: `{result.isolation}`",
        *([f"- limits: {result.limits}"] if result.limits else []),
        *([f"- graded at {markdown_text(result.chapter)}"] if result.chapter else []),
        "",
    ]


def _score_table(result: SubmissionResult) -> list[str]:
    """Points and case counts per lab, as a table."""
    label = result.rubric.group_label
    lines = [
        f"| {label} | points | max | passed | failed | of which because of another {label} | errored | not run | skipped |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for lab in result.score.labs:
        counts = lab.counts
        errored = counts.get("errored", 0) - lab.not_run
        lines.append(
            f"| {lab.lab} | {points(lab.points)} | {points(lab.max_points)} | {lab.passed}/{lab.total} "
            f"| {counts.get('failed', 0)} | {lab.inherited} | {errored} | {lab.not_run} | {counts.get('skipped', 0)} |"
        )
    return lines


def _lab_section(
    result: SubmissionResult, clauses: Mapping[str, Clause], lab: LabScore, failing: list[GradedCase], skipped: list[GradedCase]
) -> list[str]:
    """One lab's section: its failing cases, those excused by an earlier lab's bug, its skipped ones."""
    label = result.rubric.group_label
    heading = f"## {label.capitalize()} {lab.lab}"
    lines = ["", f"{heading}: {lab.passed}/{lab.total} passed, {points(lab.points)} / {points(lab.max_points)} points"]
    if result.status not in NOT_STARTED:
        lines += _failing_cases(clauses, label, lab.lab, failing)
    inherited = [graded for graded in result.score.cases if graded.case.lab == lab.lab and graded.inherited is not None]
    if inherited:
        lines += [
            "",
            f"{len(inherited)} failed only because of {excusing_lab(inherited, label)}'s bug ({excused_cost(inherited, label)}):",
            "",
        ]
        lines += [f"- `{graded.case.id}`: {_cell(inherited_line(graded, clauses))}" for graded in inherited]
    reasons = skipped_reasons(skipped)
    if reasons:
        lines += ["", "Skipped (no points):", ""]
        lines += [f"- {count} case{'s' if count != 1 else ''}: {markdown_text(reason)}" for reason, count in reasons]
    return lines


def _failing_cases(clauses: Mapping[str, Clause], label: str, lab: str, failing: list[GradedCase]) -> list[str]:
    """Each cause of failure with its first case's feedback in full, its other cases by id."""
    lines: list[str] = []
    shown: dict[Cause, list[str]] = {}
    for graded in failing:
        held = " (held out)" if graded.held_out else ""
        cause = cause_of(graded.case, graded.outcome)
        if cause in shown:
            shown[cause].append(f"{markdown_code(graded.case.id)}{held}")
            continue
        shown.setdefault(cause, [])
        lines += ["", f"### `{graded.case.id}`: {graded.outcome.status}{held}", "", _fence(case_feedback(graded, clauses))]
    for cause, same in shown.items():
        if same:
            count = f"{len(same)} more case{'s' if len(same) != 1 else ''}"
            lines += ["", f"{count} of {label} {lab} failed the same way ({markdown_text(str(cause))}): {', '.join(same)}"]
    return lines
