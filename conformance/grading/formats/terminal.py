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
from conformance.grading.case_feedback import case_feedback, inherited_line
from conformance.grading.featured import featured_by_lab
from conformance.grading.formats import causes
from conformance.grading.formats.common import (
    excused_cost,
    inherited_groups,
    lab_counts,
    not_passed_by_lab,
    points,
    profile_of,
    skipped_reasons,
)
from conformance.grading.grader import SubmissionResult
from conformance.grading.status import NOT_STARTED
from conformance.spec.clauses import Clause

DEFAULT_DETAILS_PER_LAB = 2
_BUILD_LINES = 20


def render(  # noqa: C901  # TODO(issue 25): split
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
    label = result.rubric.group_label
    profile = profile_of(result)
    lines = [
        f"pi-conformance grade: {result.name}" + (f" (profile {profile})" if profile else ""),
        f"  implementation: {result.implementation}   rubric: {_rubric_name(result)}   sandbox: {result.isolation}",
        *([f"  limits: {result.limits}"] if result.limits else []),
        "",
    ]
    width = len(points(result.score.max_points))
    count_width = max((len(str(lab.total)) for lab in result.score.labs), default=1)
    # The course's labs take 5 columns (3.1 and two spaces); longer names (areas) one more than their length.
    name_width = max([5, *(len(lab.lab) + 2 for lab in result.score.labs)])
    for lab in result.score.labs:
        ratio = f"{lab.passed:>{count_width}}/{lab.total:<{count_width}}"
        earned = f"{points(lab.points):>{width}} / {points(lab.max_points):<{width}}"
        lines.append(f"  {label} {lab.lab:<{name_width}}{earned}  {ratio} passed  {lab_counts(lab, label)}".rstrip())
    total = f"{result.score.passed}/{result.score.total}"
    total_width = len(label) + 1 + name_width
    lines.append(
        f"  {'total':<{total_width}}{points(result.score.points):>{width}} / {points(result.score.max_points):<{width}}  {total} passed"
    )
    lines.append(f"  {'status':<{total_width}}{result.status}" + (f": {result.detail}" if result.detail else ""))
    if result.build_report:
        build_lines = result.build_report.splitlines()
        lines += ["", "build output:", *(f"  {line}" for line in build_lines[:_BUILD_LINES])]
        if len(build_lines) > _BUILD_LINES:
            lines.append(f"  … {len(build_lines) - _BUILD_LINES} more lines in build.log")

    if not list_cases:
        return for_terminal("\n".join(lines) + "\n")
    failing = not_passed_by_lab(result)
    if failing and result.status not in NOT_STARTED:
        lines += ["", *cause_lines(result, clauses)]
    inherited = inherited_groups(result)
    if inherited:
        excused = [graded for group in inherited.values() for graded in group]
        lines += ["", f"failing because of an earlier {label}'s bug (charged once, in that {label}; {excused_cost(excused, label)})"]
        for group in inherited.values():
            labs = sorted({graded.case.lab for graded in group})
            where = ", ".join(f"{label} {lab}" for lab in labs)
            lines.append(f"  {len(group)} case{'s' if len(group) != 1 else ''} of {where}: {inherited_line(group[0], clauses)}")
    skipped = not_passed_by_lab(result, ("skipped",))
    if skipped:
        lines += ["", "skipped cases (they earn no points)"]
        for lab_name, cases in skipped.items():
            for reason, count in skipped_reasons(cases):
                lines.append(f"  {label} {lab_name}: {count} skipped: {reason}")

    if failing and result.status not in NOT_STARTED and details_per_lab != 0:
        shown = (
            "every failing case"
            if details_per_lab is None
            else f"one case per cause, up to {details_per_lab} per {label}, those whose hint fits first"
        )
        lines += ["", f"feedback ({shown}; the --markdown and --json reports have every case)"]
        for lab_name, chosen in featured_by_lab(result, details_per_lab).items():
            for graded in chosen:
                lines += [
                    "",
                    f"── {label} {lab_name}: {graded.case.id} " + "─" * max(0, 60 - len(graded.case.id)),
                    case_feedback(graded, clauses),
                ]
    # Names, messages and the build log quote the submission: no escape sequence of theirs reaches a terminal.
    return for_terminal("\n".join(lines) + "\n")


_IDS_SHOWN = 3


def _rubric_name(result: SubmissionResult) -> str:
    """The rubric's name, and how it scores when that is not the default."""
    note = result.rubric.scoring_note
    return f"{result.rubric.name} ({note})" if note else result.rubric.name


def cause_lines(result: SubmissionResult, clauses: Mapping[str, Clause]) -> list[str]:
    """The failing cases, one line per cause (:mod:`conformance.grading.formats.causes`), a few case ids each.

    A module that kills the program on import fails every case that needs it: that is one
    line, not a hundred.
    """
    found = causes.cause_lines(result, clauses)
    return [causes.heading(found), *(f"  {line.render(result.rubric.group_label, _IDS_SHOWN)}" for line in found)]
