# ruff: noqa: E501  (HTML templates read better as one line per element)
"""One submission's page of a ``grade-batch --html`` site (:mod:`conformance.reports.html.class_site`).

It has the submission's per-lab scores, its failures grouped by cause with the traces side by
side, and the cases that fail only because of an earlier lab, under that lab. Held-out cases
follow the Gradescope rule: the staff's page marks them and says when students see them; a
students' page leaves them out entirely, and shows no points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase
from conformance.judging.failure_groups import FailureGroup, group_failures, skip_reasons
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.model.clauses import Clause
from conformance.reports.formats.common import counted, excused_cost, excusing_lab, lab_counts, points, profile_of
from conformance.reports.html.casepage import case_section
from conformance.reports.html.layout import anchor, badge, e, page

#: Statuses whose cases were never run: their "failures" say nothing about the class's code.
NOT_RUN = frozenset({"build-failed", "not-a-project", "invalid"})


def visible_cases(result: SubmissionResult, for_students: bool) -> list[GradedCase]:
    """The cases a page shows: all of them, or for students all but the held-out ones."""
    return [graded for graded in result.score.cases if not (for_students and graded.held_out)]


def charged_cases(cases: Sequence[GradedCase]) -> list[tuple[Case, Outcome]]:
    """The failed and errored cases charged to their own lab (not excused by an earlier lab's bug)."""
    return [
        (graded.case, graded.outcome) for graded in cases if graded.outcome.status in ("failed", "errored") and graded.inherited is None
    ]


def status_badge(status: str) -> str:
    """A submission's status as a badge: passed for ok, failed for anything else."""
    return badge("passed" if status == "ok" else "failed", status)


@dataclass(frozen=True)
class _PageContext:
    """What every part of one submission's page needs: the result, the clauses, and who the page is for."""

    result: SubmissionResult
    clauses: Mapping[str, Clause]
    for_students: bool

    @property
    def label(self) -> str:
        return self.result.rubric.group_label

    @property
    def hide_points(self) -> bool:
        """Students' pages of a rubric with held-out cases show no points: lab points would tell how those did."""
        return self.for_students and bool(self.result.rubric.held_out)

    def extra(self, graded: GradedCase) -> list[str]:
        """The badges a case's section gets besides its status: "held out" on the staff's pages."""
        if graded.held_out and not self.for_students:
            return [badge("skipped", f"held out: students see it {self.result.rubric.held_out_visibility}")]
        return []


def submission_page(result: SubmissionResult, clauses: Mapping[str, Clause], for_students: bool) -> str:
    """One submission's page."""
    context = _PageContext(result, clauses, for_students)
    cases = visible_cases(result, for_students)
    profile = profile_of(result)
    parts = [f"<h1>{e(result.name)}</h1>", f"<p>{status_badge(result.status)} {e(result.detail)}</p>"]
    parts.append(
        f'<p class="small muted">implementation {e(result.implementation)}; {f"profile {e(profile)}; " if profile else ""}'
        f"sandbox {e(result.isolation)}; limits {e(result.limits or 'none')}; graded in {result.duration_s:.1f} s</p>"
    )
    parts.append(_labs_table(context, cases))
    if result.build_report:
        parts.append(f"<details><summary>build log</summary><pre>{e(result.build_report)}</pre></details>")
    if result.status not in NOT_RUN:
        parts += _failures(context, cases)
    skipped = skip_reasons([graded.outcome for graded in cases])
    if skipped:
        rows_html = "".join(f'<tr><td class="num">{count}</td><td>{e(reason)}</td></tr>' for reason, count in skipped)
        parts.append(
            f'<h2 id="skipped">Skipped</h2><table><thead><tr><th scope="col">cases</th><th scope="col">reason</th></tr></thead><tbody>{rows_html}</tbody></table>'
        )
    # A student's page links to nothing of the class: the overview names every student and score.
    crumbs = [(result.name, None)] if for_students else [("class overview", "index.html"), (result.name, None)]
    return page(result.name, "\n".join(parts), crumbs)


def _labs_table(context: _PageContext, cases: Sequence[GradedCase]) -> str:
    """Per lab: points (unless hidden), visible cases passed and what the counts leave out; then the total."""
    result, label, hide_points = context.result, context.label, context.hide_points
    rows = []
    for lab_score in result.score.labs:
        in_lab = [graded for graded in cases if graded.case.lab == lab_score.lab]
        passed = sum(graded.passed for graded in in_lab)
        score_cell = "" if hide_points else f'<td class="num">{points(lab_score.points)} / {points(lab_score.max_points)}</td>'
        note = "" if hide_points else e(lab_counts(lab_score, label))
        rows.append(
            f'<tr><th scope="row">{e(label)} {e(lab_score.lab)}</th>{score_cell}<td class="num">{passed}/{len(in_lab)}</td><td class="small">{note}</td></tr>'
        )
    score_head = "" if hide_points else '<th scope="col">points</th>'
    total = (
        ""
        if hide_points
        else f'<tr><th scope="row">total</th><td class="num">{points(result.score.points)} / {points(result.score.max_points)}</td><td class="num">{result.score.passed}/{result.score.total}</td><td></td></tr>'
    )
    return (
        f'<h2 id="labs">{e(label.capitalize())}s</h2><table><thead><tr><th scope="col">{e(label)}</th>{score_head}<th scope="col">cases passed</th><th scope="col">notes</th></tr></thead>'
        f"<tbody>{''.join(rows)}{total}</tbody></table>"
    )


def _failures(context: _PageContext, cases: Sequence[GradedCase]) -> list[str]:
    """The failures grouped by cause, then the cases that fail only because of an earlier lab."""
    groups = group_failures(charged_cases(cases), context.clauses)
    inherited: dict[tuple[str, tuple[str, ...]], list[GradedCase]] = {}
    for graded in cases:
        if graded.inherited is not None:
            inherited.setdefault((graded.inherited.lab, graded.inherited.symptoms), []).append(graded)
    parts = _failure_groups(context, groups, {graded.case.id: graded for graded in cases})
    if not groups and not inherited:
        # No empty "Failures by cause (0 cases in 0 groups)" section: one line under the labs says it.
        # Students do not see held-out cases, so theirs is said to be about the visible ones only.
        parts.append("<p>No failures among the visible cases.</p>" if context.hide_points else "<p>No failures.</p>")
    if inherited:
        parts += _inherited_sections(context, inherited)
    return parts


def _failure_groups(context: _PageContext, groups: Sequence[FailureGroup], by_id: Mapping[str, GradedCase]) -> list[str]:
    """A numbered table of contents of the groups, then each group with its cases' sections."""
    parts = []
    if groups:
        parts.append(
            f'<h2 id="failures">Failures by cause ({counted(sum(len(group.members) for group in groups), "case")} in {counted(len(groups), "group")})</h2>'
        )
        toc = "".join(
            f'<li><a href="#group-{number}">{e(group.clause or "")} <code>{e(str(group.cause))}</code></a> ({len(group.members)})</li>'
            for number, group in enumerate(groups, start=1)
        )
        parts.append(f"<ol>{toc}</ol>")
    for number, group in enumerate(groups, start=1):
        ids = "".join(f'<li><a href="#{anchor(case.id)}"><code>{e(case.id)}</code></a></li>' for case, _ in group.members)
        sections = "".join(
            case_section(case, outcome, context.clauses, context.extra(by_id[case.id]), heading="h4") for case, outcome in group.members
        )
        parts.append(
            f'<section id="group-{number}"><h3>[{number}] {len(group.members)} case{"s" if len(group.members) != 1 else ""}: '
            f'{e(group.clause or "")} <code>{e(str(group.cause))}</code></h3><ul class="cases small">{ids}</ul>{sections}</section>'
        )
    return parts


def _inherited_sections(context: _PageContext, inherited: Mapping[tuple[str, tuple[str, ...]], list[GradedCase]]) -> list[str]:
    """The cases excused by an earlier lab's bug, one folded section each, under a heading per bug."""
    label, show_points = context.label, not context.hide_points
    excused = [graded for members in inherited.values() for graded in members]
    parts = [
        f'<h2 id="inherited">Failing because of {e(excusing_lab(excused, label))} ({e(excused_cost(excused, label, show_points))})</h2>'
    ]
    for (lab, symptoms), members in inherited.items():
        sections = "".join(
            f"<details><summary><code>{e(graded.case.id)}</code> ({e(label)} {e(graded.case.lab)})</summary>"
            + case_section(graded.case, graded.outcome, context.clauses, context.extra(graded), status="inherited", heading="h4")
            + "</details>"
            for graded in members
        )
        parts.append(
            f"<h3>{badge('inherited', f'because of {label} {lab}')} {len(members)} case{'s' if len(members) != 1 else ''}: "
            f'<code>{e("; ".join(symptoms))}</code></h3><p class="small">Fix {e(label)} {e(lab)} first; {e(excused_cost(members, label, show_points))}.</p>{sections}'
        )
    return parts
