# ruff: noqa: E501  (HTML templates read better as one line per element)
"""``grade-batch --html DIR``: a class overview and one page per submission.

The overview shows, per lab, the distribution of scores (an SVG histogram), the status
counts, and the causes most students hit (clause, place and kind of divergence, how many
students, one example): what to reteach. A submission's page
(:mod:`conformance.reports.html.submission_page`) has its per-lab scores, its failures grouped
by cause with the traces side by side, and the cases that fail only because of an earlier
lab, under that lab.

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

from conformance.grading.grader import SubmissionResult
from conformance.judging.failure_groups import Cause, FailureGroup, group_failures
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.model.clauses import Clause
from conformance.reports.formats.common import points, profile_of
from conformance.reports.html.layout import anchor, e, page, slugs, write_page
from conformance.reports.html.submission_page import NOT_RUN, charged_cases, status_badge, submission_page, visible_cases
from conformance.reports.html.svg import histogram

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
        if result.status in NOT_RUN:
            continue
        groups: list[FailureGroup] = group_failures(charged_cases(visible_cases(result, for_students)), clauses)
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
        visible = [graded for graded in visible_cases(result, True) if graded.case.lab == lab]
        return f"{sum(graded.passed for graded in visible)}/{len(visible)} visible cases"
    score = result.score.lab(lab)
    return f"{points(score.points)} / {points(score.max_points)}" if score else "—"


def overview(
    results: Sequence[SubmissionResult], clauses: Mapping[str, Clause], files: Mapping[str, str], for_students: bool, note: str = ""
) -> str:
    """The class overview page."""
    rubric = results[0].rubric if results else None
    labs = [lab for lab in rubric.labs] if rubric else []
    label = rubric.group_label if rubric else "lab"
    # Students see the share of visible cases passed, not points: points would tell how the held-out cases did.
    shares = for_students and rubric is not None and bool(rubric.held_out)
    parts = [f"<h1>Class overview: {len(results)} submission{'s' if len(results) != 1 else ''}</h1>"]
    profile = profile_of(results[0]) if results else None
    if profile:
        parts.append(f"<p>profile {e(profile)}: cases grouped by {e(label)}</p>")
    if note:
        parts.append(f'<p class="muted">{e(note)}</p>')
    parts.append(_status_table(results))
    graded = [result for result in results if result.status not in NOT_RUN]
    parts += _score_charts(graded, labs, label, for_students, shares)
    parts += _groups_section(class_groups(results, clauses, for_students), clauses, files)
    parts.append(_submissions_table(results, files, labs, label, for_students, shares))
    return page("Class overview", "\n".join(parts), [("class overview", None)])


def _status_table(results: Sequence[SubmissionResult]) -> str:
    statuses = Counter(result.status for result in results)
    rows = "".join(f'<tr><td>{status_badge(status)}</td><td class="num">{count}</td></tr>' for status, count in statuses.most_common())
    return f'<h2 id="statuses">Status</h2><table><thead><tr><th scope="col">status</th><th scope="col">submissions</th></tr></thead><tbody>{rows}</tbody></table>'


def _score_charts(graded: Sequence[SubmissionResult], labs: Sequence[str], label: str, for_students: bool, shares: bool) -> list[str]:
    """The heading, one histogram per lab of the graded submissions, and what the charts leave out."""
    parts = [f'<h2 id="scores">Score distribution per {e(label)}</h2>']
    if shares:
        parts.append(
            '<p class="small muted">share of visible cases passed, in percent (held-out cases are graded too and shown when grades are published)</p>'
        )
    charts = []
    for lab in labs:
        values, maximum = _lab_values(graded, lab, for_students)
        chart_label = f"{label} {lab}, {len(values)} graded submissions"
        charts.append(
            f'<figure style="display:inline-block;margin:0 1rem 1rem 0"><figcaption>{e(label)} {e(lab)}</figcaption>{histogram(values, maximum, chart_label)}</figure>'
        )
    parts.append("".join(charts))
    parts.append(
        '<p class="small muted">submissions that were not run (build failed, not a project, invalid) are left out of the charts and the failure groups</p>'
    )
    return parts


def _lab_values(graded: Sequence[SubmissionResult], lab: str, for_students: bool) -> tuple[list[float], float]:
    """Each submission's score in ``lab`` (points, or percent of visible cases for students), and the chart's maximum."""
    values: list[float] = []
    maximum = 100.0
    for result in graded:
        if for_students and result.rubric.held_out:
            visible = [case for case in visible_cases(result, True) if case.case.lab == lab]
            values.append(100.0 * sum(case.passed for case in visible) / len(visible) if visible else 0.0)
        else:
            score = result.score.lab(lab)
            if score is not None:
                values.append(score.points)
                maximum = score.max_points
    return values, maximum


def _groups_section(groups: Sequence[ClassGroup], clauses: Mapping[str, Clause], files: Mapping[str, str]) -> list[str]:
    """The most common causes: the first :data:`TOP_GROUPS` in a table, the rest folded away."""
    parts = ['<h2 id="groups">Most common causes</h2>']
    parts.append(
        '<p class="small muted">each student counts once per cause; a cause is where the first divergence is and how it differs</p>'
    )
    if not groups:
        return [*parts, "<p>No failures.</p>"]
    rows_html = [_group_row(number, group, clauses, files) for number, group in enumerate(groups, start=1)]
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
    return parts


def _group_row(number: int, group: ClassGroup, clauses: Mapping[str, Clause], files: Mapping[str, str]) -> str:
    """One cause's row: its clause, who hit it (the first eight linked), and a link to one example."""
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
    return (
        f'<tr><td class="num">{number}</td><td style="white-space:nowrap">{clause_cell}</td><td><code>{e(str(group.cause))}</code></td>'
        f'<td class="num">{len(group.students)}</td><td class="num">{len(group.main_for)}</td><td class="num">{group.cases}</td><td class="small">{students}{more}</td><td>{example}</td></tr>'
    )


def _submissions_table(
    results: Sequence[SubmissionResult], files: Mapping[str, str], labs: Sequence[str], label: str, for_students: bool, shares: bool
) -> str:
    """Every submission with its status, its score per lab and its total (no total where students see shares)."""
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
            f'<tr><th scope="row"><a href="{e(files[result.name])}">{e(result.name)}</a></th><td>{status_badge(result.status)}</td>{cells}{total}</tr>'
        )
    total_head = "" if shares else '<th scope="col">total</th>'
    return (
        f'<h2 id="submissions">Submissions</h2><table><thead><tr><th scope="col">submission</th><th scope="col">status</th>{head}{total_head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


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
