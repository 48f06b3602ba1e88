# ruff: noqa: E501  (HTML templates read better as one line per element)
"""``grade-batch --html DIR``: a class overview and one page per submission.

The overview shows, per lab, the distribution of scores (an SVG histogram), the status
counts, and the causes most students hit (clause, place and kind of divergence, how many
students, one example): what to reteach. A submission's page has its per-lab scores, its
failures grouped by cause with the traces side by side, and the cases that fail only
because of an earlier lab, under that lab.

Held-out cases follow the Gradescope rule: the staff site marks them and says when
students see them; a ``for_students`` site leaves them out entirely (no points either,
since lab points would tell how the held-out cases did).

For a profile other than the course's (``pi-ai-1``) the pages name the profile and say
"area" where the course's say "lab".
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.grading.formats.common import counted, excused_cost, lab_counts, points, profile_of
from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase
from conformance.judging.failure_groups import Cause, FailureGroup, group_failures, skip_reasons
from conformance.judging.outcome import Outcome
from conformance.loading.cases import Case
from conformance.reports.html.casepage import case_section
from conformance.reports.html.layout import anchor, badge, e, page, slugs, write_page
from conformance.reports.html.svg import histogram
from conformance.spec.clauses import Clause

#: Statuses whose cases were never run: their "failures" say nothing about the class's code.
_NOT_RUN = frozenset({"build-failed", "not-a-project", "invalid"})
TOP_GROUPS = 15


@dataclass
class SiteStats:
    """What a site build wrote."""

    folder: Path
    pages: int = 0
    bytes: int = 0
    seconds: float = 0.0
    paths: list[Path] = field(default_factory=list)
    #: False for a students' site: one page each, no class overview.
    index: bool = True

    def add(self, path: Path) -> None:
        self.pages += 1
        self.bytes += path.stat().st_size
        self.paths.append(path)

    def line(self) -> str:
        where = self.folder / "index.html" if self.index else f"{self.folder} (one page per student, no class overview)"
        return f"{self.pages} pages, {self.bytes / 1024:.0f} KiB, in {self.seconds:.2f} s: {where}"


def _visible(result: SubmissionResult, for_students: bool) -> list[GradedCase]:
    return [graded for graded in result.score.cases if not (for_students and graded.held_out)]


def _charged(cases: Sequence[GradedCase]) -> list[tuple[Case, Outcome]]:
    return [
        (graded.case, graded.outcome) for graded in cases if graded.outcome.status in ("failed", "errored") and graded.inherited is None
    ]


@dataclass
class ClassGroup:
    """One root cause over the class: which students hit it (each once), in how many cases, and one example."""

    clause: str | None
    pattern: str
    kind: str = "value"
    detail: str = ""
    students: list[str] = field(default_factory=list)
    cases: int = 0
    example: tuple[str, Case, Outcome] | None = None
    #: Students for whom this is the main mistake (their largest group).
    main_for: list[str] = field(default_factory=list)

    @property
    def cause(self) -> Cause:
        """The group's cause (place and kind)."""
        return Cause(self.pattern, self.kind, self.detail)


def class_groups(results: Sequence[SubmissionResult], clauses: Mapping[str, Clause], for_students: bool = False) -> list[ClassGroup]:
    """The failure groups of every graded submission, merged by cause (place and kind); most students first.

    Groups of two students merge only when their causes are the same, never on the clause
    that labels them (a label comes from one example); each student counts once per cause.
    """
    merged: dict[Cause, ClassGroup] = {}
    for result in results:
        if result.status in _NOT_RUN:
            continue
        groups: list[FailureGroup] = group_failures(_charged(_visible(result, for_students)), clauses)
        for number, group in enumerate(groups):
            entry = merged.setdefault(group.cause, ClassGroup(group.clause, group.pattern, group.kind, group.detail))
            entry.students.append(result.name)
            entry.cases += len(group.members)
            if number == 0:
                entry.main_for.append(result.name)
            if entry.example is None:
                case, outcome = group.example
                assert isinstance(case, Case)
                entry.example = (result.name, case, outcome)
    return sorted(merged.values(), key=lambda group: (-len(group.students), -len(group.main_for), -group.cases))


def _lab_score_cell(result: SubmissionResult, lab: str, for_students: bool) -> str:
    if for_students and result.rubric.held_out:
        visible = [graded for graded in _visible(result, True) if graded.case.lab == lab]
        return f"{sum(graded.passed for graded in visible)}/{len(visible)} visible cases"
    score = result.score.lab(lab)
    return f"{points(score.points)} / {points(score.max_points)}" if score else "—"


def _status_text(status: str) -> str:
    return badge("passed" if status == "ok" else "failed", status)


def overview(  # noqa: C901  # TODO(issue 25): split
    results: Sequence[SubmissionResult], clauses: Mapping[str, Clause], files: Mapping[str, str], for_students: bool, note: str = ""
) -> str:
    """The class overview page."""
    rubric = results[0].rubric if results else None
    labs = [lab for lab in rubric.labs] if rubric else []
    label = rubric.group_label if rubric else "lab"
    parts = [f"<h1>Class overview: {len(results)} submission{'s' if len(results) != 1 else ''}</h1>"]
    profile = profile_of(results[0]) if results else None
    if profile:
        parts.append(f"<p>profile {e(profile)}: cases grouped by {e(label)}</p>")
    if note:
        parts.append(f'<p class="muted">{e(note)}</p>')
    statuses = Counter(result.status for result in results)
    rows = "".join(f'<tr><td>{_status_text(status)}</td><td class="num">{count}</td></tr>' for status, count in statuses.most_common())
    parts.append(
        f'<h2 id="statuses">Status</h2><table><thead><tr><th scope="col">status</th><th scope="col">submissions</th></tr></thead><tbody>{rows}</tbody></table>'
    )
    graded = [result for result in results if result.status not in _NOT_RUN]
    parts.append(f'<h2 id="scores">Score distribution per {e(label)}</h2>')
    if for_students and rubric is not None and rubric.held_out:
        parts.append(
            '<p class="small muted">share of visible cases passed, in percent (held-out cases are graded too and shown when grades are published)</p>'
        )
    charts = []
    for lab in labs:
        values: list[float] = []
        maximum = 100.0
        for result in graded:
            if for_students and result.rubric.held_out:
                visible = [case for case in _visible(result, True) if case.case.lab == lab]
                values.append(100.0 * sum(case.passed for case in visible) / len(visible) if visible else 0.0)
            else:
                score = result.score.lab(lab)
                if score is not None:
                    values.append(score.points)
                    maximum = score.max_points
        chart_label = f"{label} {lab}, {len(values)} graded submissions"
        charts.append(
            f'<figure style="display:inline-block;margin:0 1rem 1rem 0"><figcaption>{e(label)} {e(lab)}</figcaption>{histogram(values, maximum, chart_label)}</figure>'
        )
    parts.append("".join(charts))
    parts.append(
        '<p class="small muted">submissions that were not run (build failed, not a project, invalid) are left out of the charts and the failure groups</p>'
    )
    groups = class_groups(results, clauses, for_students)
    parts.append('<h2 id="groups">Most common causes</h2>')
    parts.append(
        '<p class="small muted">each student counts once per cause; a cause is where the first divergence is and how it differs</p>'
    )
    if not groups:
        parts.append("<p>No failures.</p>")
    else:
        rows_html = []
        for number, group in enumerate(groups, start=1):
            example = ""
            if group.example is not None:
                name, case, outcome = group.example
                href = f"{files[name]}#{anchor(case.id)}"
                first_line = str(outcome.divergence) if outcome.divergence is not None else (outcome.message.splitlines() or [""])[0]
                example = f'<a href="{e(href)}">{e(name)}: <code>{e(case.id)}</code></a><br><code class="small">{e(first_line)}</code>'
            clause_text = clauses[group.clause].text if group.clause is not None and group.clause in clauses else ""
            clause_cell = f'<abbr title="{e(clause_text)}">{e(group.clause)}</abbr>' if group.clause else '<span class="muted">—</span>'
            students = ", ".join(f'<a href="{e(files[name])}">{e(name)}</a>' for name in group.students[:8])
            more = f" and {len(group.students) - 8} more" if len(group.students) > 8 else ""
            rows_html.append(
                f'<tr><td class="num">{number}</td><td style="white-space:nowrap">{clause_cell}</td><td><code>{e(str(group.cause))}</code></td>'
                f'<td class="num">{len(group.students)}</td><td class="num">{len(group.main_for)}</td><td class="num">{group.cases}</td><td class="small">{students}{more}</td><td>{example}</td></tr>'
            )
        table_head = (
            '<table><thead><tr><th scope="col">#</th><th scope="col">clause</th><th scope="col">cause</th>'
            '<th scope="col">students</th><th scope="col" title="students for whom this is the largest group">main mistake of</th><th scope="col">cases</th><th scope="col">who</th><th scope="col">example</th></tr></thead>'
        )
        parts.append(f"{table_head}<tbody>{''.join(rows_html[:TOP_GROUPS])}</tbody></table>")
        if len(rows_html) > TOP_GROUPS:
            rest = len(rows_html) - TOP_GROUPS
            parts.append(
                f"<details><summary>{rest} more failure group{'s' if rest != 1 else ''}</summary>{table_head}<tbody>{''.join(rows_html[TOP_GROUPS:])}</tbody></table></details>"
            )
    head = "".join(f'<th scope="col">{e(label)} {e(lab)}</th>' for lab in labs)
    body = []
    for result in results:
        total = (
            ""
            if for_students and result.rubric.held_out
            else f'<td class="num">{points(result.score.points)} / {points(result.score.max_points)}</td>'
        )
        cells = "".join(f'<td class="num">{e(_lab_score_cell(result, lab, for_students))}</td>' for lab in labs)
        body.append(
            f'<tr><th scope="row"><a href="{e(files[result.name])}">{e(result.name)}</a></th><td>{_status_text(result.status)}</td>{cells}{total}</tr>'
        )
    total_head = "" if for_students and rubric is not None and rubric.held_out else '<th scope="col">total</th>'
    parts.append(
        f'<h2 id="submissions">Submissions</h2><table><thead><tr><th scope="col">submission</th><th scope="col">status</th>{head}{total_head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )
    return page("Class overview", "\n".join(parts), [("class overview", None)])


def submission_page(result: SubmissionResult, clauses: Mapping[str, Clause], for_students: bool) -> str:  # noqa: C901  # TODO(issue 25): split
    """One submission's page."""
    cases = _visible(result, for_students)
    hide_points = for_students and result.rubric.held_out
    label = result.rubric.group_label
    profile = profile_of(result)
    parts = [f"<h1>{e(result.name)}</h1>", f"<p>{_status_text(result.status)} {e(result.detail)}</p>"]
    parts.append(
        f'<p class="small muted">implementation {e(result.implementation)}; {f"profile {e(profile)}; " if profile else ""}'
        f"sandbox {e(result.isolation)}; limits {e(result.limits or 'none')}; graded in {result.duration_s:.1f} s</p>"
    )
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
    parts.append(
        f'<h2 id="labs">{e(label.capitalize())}s</h2><table><thead><tr><th scope="col">{e(label)}</th>{score_head}<th scope="col">cases passed</th><th scope="col">notes</th></tr></thead>'
        f"<tbody>{''.join(rows)}{total}</tbody></table>"
    )
    if result.build_report:
        parts.append(f"<details><summary>build log</summary><pre>{e(result.build_report)}</pre></details>")
    held_out_note = result.rubric.held_out_visibility

    def extra(graded: GradedCase) -> list[str]:
        if graded.held_out and not for_students:
            return [badge("skipped", f"held out: students see it {held_out_note}")]
        return []

    if result.status not in _NOT_RUN:
        groups = group_failures(_charged(cases), clauses)
        by_id = {graded.case.id: graded for graded in cases}
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
            sections = "".join(case_section(case, outcome, clauses, extra(by_id[case.id]), heading="h4") for case, outcome in group.members)
            parts.append(
                f'<section id="group-{number}"><h3>[{number}] {len(group.members)} case{"s" if len(group.members) != 1 else ""}: '
                f'{e(group.clause or "")} <code>{e(str(group.cause))}</code></h3><ul class="cases small">{ids}</ul>{sections}</section>'
            )
        inherited: dict[tuple[str, tuple[str, ...]], list[GradedCase]] = {}
        for graded in cases:
            if graded.inherited is not None:
                inherited.setdefault((graded.inherited.lab, graded.inherited.symptoms), []).append(graded)
        if not groups and not inherited:
            # No empty "Failures by cause (0 cases in 0 groups)" section: one line under the labs says it.
            # Students do not see held-out cases, so theirs is said to be about the visible ones only.
            parts.append("<p>No failures among the visible cases.</p>" if hide_points else "<p>No failures.</p>")
        if inherited:
            excused = [graded for members in inherited.values() for graded in members]
            parts.append(
                f'<h2 id="inherited">Failing because of an earlier {e(label)} ({e(excused_cost(excused, label, not hide_points))})</h2>'
            )
            for (lab, symptoms), members in inherited.items():
                sections = "".join(
                    f"<details><summary><code>{e(graded.case.id)}</code> ({e(label)} {e(graded.case.lab)})</summary>"
                    + case_section(graded.case, graded.outcome, clauses, extra(graded), status="inherited", heading="h4")
                    + "</details>"
                    for graded in members
                )
                parts.append(
                    f"<h3>{badge('inherited', f'because of {label} {lab}')} {len(members)} case{'s' if len(members) != 1 else ''}: "
                    f'<code>{e("; ".join(symptoms))}</code></h3><p class="small">Fix {e(label)} {e(lab)} first; {e(excused_cost(members, label, not hide_points))}.</p>{sections}'
                )
    skipped = skip_reasons([graded.outcome for graded in cases])
    if skipped:
        rows_html = "".join(f'<tr><td class="num">{count}</td><td>{e(reason)}</td></tr>' for reason, count in skipped)
        parts.append(
            f'<h2 id="skipped">Skipped</h2><table><thead><tr><th scope="col">cases</th><th scope="col">reason</th></tr></thead><tbody>{rows_html}</tbody></table>'
        )
    # A student's page links to nothing of the class: the overview names every student and score.
    crumbs = [(result.name, None)] if for_students else [("class overview", "index.html"), (result.name, None)]
    return page(result.name, "\n".join(parts), crumbs)


def write_class_site(
    folder: Path, results: Sequence[SubmissionResult], clauses: Mapping[str, Clause], for_students: bool = False, note: str = ""
) -> SiteStats:
    """Write the overview and every submission's page into ``folder``.

    ``for_students``: one page per student, which shows no other student: no class overview
    (it lists every name and score) and no link to one.
    """
    started = time.perf_counter()
    stats = SiteStats(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = slugs([result.name for result in results], prefix="s-")
    for result in results:
        stats.add(write_page(folder, files[result.name], submission_page(result, clauses, for_students)))
    if not for_students:
        stats.add(write_page(folder, "index.html", overview(results, clauses, files, for_students, note)))
    else:
        stats.index = False
    stats.seconds = time.perf_counter() - started
    return stats
