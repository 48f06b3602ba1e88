"""The summary ``pi-conformance grade`` prints: points per lab, failing cases by lab, feedback.

For a profile other than the course's it names the profile and says "area" for "lab".

Every failing case is listed with its first divergence; full feedback is printed for a few
per lab, so one bug that fails forty cases does not bury the summary. The Markdown and JSON
reports carry all of it.

Which cases get full feedback: first those whose hint is about what diverged (a key of the
divergence path, such as ``partial`` or ``threw``, is a word of the hint's first rung), then
the rest in fixture order. A case's hint is written for the bug the case targets; a case that
fails for another reason would show a hint about the wrong bug.
"""

from __future__ import annotations

from collections.abc import Mapping

from conformance.common.student_text import for_terminal
from conformance.feedback.case_feedback import case_feedback, inherited_line
from conformance.feedback.featured import featured_by_lab, not_passed_by_lab
from conformance.grading.grader import SubmissionResult
from conformance.grading.status import NOT_STARTED
from conformance.model.clauses import Clause
from conformance.reports.formats import causes
from conformance.reports.formats.common import (
    excused_cost,
    excusing_lab,
    inherited_groups,
    lab_parts,
    points,
    profile_of,
    skipped_reasons,
)

DEFAULT_DETAILS_PER_LAB = 2
_BUILD_LINES = 20


def render(
    result: SubmissionResult,
    clauses: Mapping[str, Clause],
    details_per_lab: int | None = DEFAULT_DETAILS_PER_LAB,
    list_cases: bool = True,
) -> str:
    """The terminal summary, control characters escaped (:func:`conformance.common.student_text.for_terminal`).

    ``details_per_lab=None`` prints feedback for every failing case, ``0`` for none;
    ``list_cases=False`` leaves out the lists of failing and skipped cases too (just the
    points table), for summaries that must not name held-out cases.
    """
    lines = [*_heading(result), *_points_table(result), *_notes(result), *_build_output(result)]
    if list_cases:
        lines += [*_case_lists(result, clauses), *_feedback(result, clauses, details_per_lab)]
    # Names, messages and the build log quote the submission: no escape sequence of theirs reaches a terminal.
    return for_terminal("\n".join(lines) + "\n")


def _heading(result: SubmissionResult) -> list[str]:
    """The submission's name and profile, how it was run, then a blank line."""
    profile = profile_of(result)
    return [
        f"pi-conformance grade: {result.name}" + (f" (profile {profile})" if profile else ""),
        f"  implementation: {result.implementation}   rubric: {_rubric_name(result)}   sandbox: {result.isolation}",
        *([f"  limits: {result.limits}"] if result.limits else []),
        *([f"  graded at {result.chapter}"] if result.chapter else []),
        "",
    ]


def _points_table(result: SubmissionResult) -> list[str]:
    """Points and passed cases per lab, the total and the status, in aligned columns."""
    label = result.rubric.group_label
    width = len(points(result.score.max_points))
    count_width = max((len(str(lab.total)) for lab in result.score.labs), default=1)
    # The course's labs take 5 columns (3.1 and two spaces); longer names (areas) one more than their length.
    name_width = max([5, *(len(lab.lab) + 2 for lab in result.score.labs)])
    lines = []
    for lab in result.score.labs:
        ratio = f"{lab.passed:>{count_width}}/{lab.total:<{count_width}}"
        earned = f"{points(lab.points):>{width}} / {points(lab.max_points):<{width}}"
        # What the points are made of: the passes, then what did not pass (an excused case can earn in full).
        tally = ", ".join([f"{ratio} passed", *lab_parts(lab, label, result.score.cases)])
        lines.append(f"  {label} {lab.lab:<{name_width}}{earned}  {tally}".rstrip())
    total = f"{result.score.passed}/{result.score.total}"
    total_width = len(label) + 1 + name_width
    lines.append(
        f"  {'total':<{total_width}}{points(result.score.points):>{width}} / {points(result.score.max_points):<{width}}  {total} passed"
    )
    lines.append(f"  {'status':<{total_width}}{result.status}" + (f": {result.detail}" if result.detail else ""))
    return lines


def _notes(result: SubmissionResult) -> list[str]:
    """Notes that cost nothing (output outside the protocol), each on a line of its own."""
    return [line for note in result.notes for line in ("", f"note: {note}")]


def _build_output(result: SubmissionResult) -> list[str]:
    """The first lines of the build log, if there is one."""
    if not result.build_report:
        return []
    build_lines = result.build_report.splitlines()
    lines = ["", "build output:", *(f"  {line}" for line in build_lines[:_BUILD_LINES])]
    if len(build_lines) > _BUILD_LINES:
        lines.append(f"  … {len(build_lines) - _BUILD_LINES} more lines in build.log")
    return lines


def _has_failures_to_show(result: SubmissionResult) -> bool:
    """Some case did not pass, and the submission got far enough for its failures to say something."""
    return bool(not_passed_by_lab(result)) and result.status not in NOT_STARTED


def _case_lists(result: SubmissionResult, clauses: Mapping[str, Clause]) -> list[str]:
    """The failing cases by cause, those excused by an earlier lab's bug, and the skipped ones."""
    lines = ["", *cause_lines(result, clauses)] if _has_failures_to_show(result) else []
    return lines + _inherited_lines(result, clauses) + _skipped_lines(result)


def _inherited_lines(result: SubmissionResult, clauses: Mapping[str, Clause]) -> list[str]:
    """One line per group of cases that fail only because of another lab's bug (mostly an earlier one)."""
    label = result.rubric.group_label
    inherited = inherited_groups(result)
    if not inherited:
        return []
    excused = [graded for group in inherited.values() for graded in group]
    lines = ["", f"failing because of {excusing_lab(excused, label)}'s bug (charged once, in that {label}; {excused_cost(excused, label)})"]
    for group in inherited.values():
        labs = sorted({graded.case.lab for graded in group})
        where = ", ".join(f"{label} {lab}" for lab in labs)
        lines.append(f"  {len(group)} case{'s' if len(group) != 1 else ''} of {where}: {inherited_line(group[0], clauses)}")
    return lines


def _skipped_lines(result: SubmissionResult) -> list[str]:
    """How many cases of each lab were skipped, and why."""
    label = result.rubric.group_label
    skipped = not_passed_by_lab(result, ("skipped",))
    if not skipped:
        return []
    lines = ["", "skipped cases (they earn no points)"]
    for lab_name, cases in skipped.items():
        for reason, count in skipped_reasons(cases):
            lines.append(f"  {label} {lab_name}: {count} skipped: {reason}")
    return lines


def _feedback(result: SubmissionResult, clauses: Mapping[str, Clause], details_per_lab: int | None) -> list[str]:
    """Full feedback for the featured failing cases of each lab (every one for ``None``, none for ``0``)."""
    if not _has_failures_to_show(result) or details_per_lab == 0:
        return []
    label = result.rubric.group_label
    shown = (
        "every failing case"
        if details_per_lab is None
        else f"one case per cause, up to {details_per_lab} per {label}, those whose hint fits first"
    )
    lines = ["", f"feedback ({shown}; the --markdown and --json reports have every case)"]
    for lab_name, chosen in featured_by_lab(result, details_per_lab).items():
        for graded in chosen:
            lines += [
                "",
                f"── {label} {lab_name}: {graded.case.id} " + "─" * max(0, 60 - len(graded.case.id)),
                case_feedback(graded, clauses),
            ]
    return lines


_IDS_SHOWN = 3


def _rubric_name(result: SubmissionResult) -> str:
    """The rubric's name, and how it scores when that is not the default."""
    note = result.rubric.scoring_note
    return f"{result.rubric.name} ({note})" if note else result.rubric.name


def cause_lines(result: SubmissionResult, clauses: Mapping[str, Clause]) -> list[str]:
    """The failing cases, one line per cause (:mod:`conformance.reports.formats.causes`), a few case ids each.

    A module that kills the program on import fails every case that needs it: that is one
    line, not a hundred.
    """
    found = causes.cause_lines(result, clauses)
    return [causes.heading(found), *(f"  {line.render(result.rubric.group_label, _IDS_SHOWN)}" for line in found)]
