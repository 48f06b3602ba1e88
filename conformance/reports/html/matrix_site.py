# ruff: noqa: E501  (HTML templates read better as one line per element)
"""``matrix --html DIR``: implementations x clauses, drill-down per clause to its cases, links to trace diffs.

``index.html`` has one row per clause and one column per implementation; each cell says
passed, failed or skipped (in text and shape) with counts, and links to the clause's page:
its text and its cases x implementations, each failing cell linking to that case's trace
diff on the implementation's page (``i-<name>.html#case-<id>``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.model.clauses import Clause
from conformance.model.profiles import get_profile
from conformance.reports.html.class_site import SiteStats
from conformance.reports.html.layout import anchor, badge, e, page, slugs, write_page
from conformance.reports.html.run_site import implementation_body


@dataclass(frozen=True)
class ImplRun:
    """One implementation's outcomes, in the order of the cases."""

    name: str
    outcomes: Sequence[Outcome]


def cell_status(outcomes: Sequence[Outcome]) -> str:
    """A clause's verdict for one implementation: failed if any case failed or errored, skipped if all were, else passed."""
    statuses = {outcome.status for outcome in outcomes}
    if statuses & {"failed", "errored"}:
        return "failed"
    if statuses == {"skipped"}:
        return "skipped"
    return "passed" if statuses else "skipped"


def _cell_text(outcomes: Sequence[Outcome]) -> str:
    passed = sum(outcome.status == "passed" for outcome in outcomes)
    skipped = sum(outcome.status == "skipped" for outcome in outcomes)
    extra = f", {skipped} skipped" if skipped and skipped != len(outcomes) else ""
    return f"{passed}/{len(outcomes)}{extra}"


def write_matrix_site(folder: Path, cases: Sequence[Case], runs: Sequence[ImplRun], clauses: Mapping[str, Clause]) -> SiteStats:
    """Write the matrix, one page per clause and one per implementation."""
    started = time.perf_counter()
    stats = SiteStats(folder)
    folder.mkdir(parents=True, exist_ok=True)
    matrix = _Matrix.of(cases, runs, clauses)
    for run in runs:
        body = implementation_body(run.name, list(zip(cases, run.outcomes, strict=True)), clauses)
        stats.add(write_page(folder, matrix.impl_files[run.name], page(run.name, body, [("matrix", "index.html"), (run.name, None)])))
    for clause in matrix.clause_ids:
        body = matrix.clause_body(clause)
        stats.add(write_page(folder, matrix.clause_files[clause], page(clause, body, [("matrix", "index.html"), (clause, None)])))
    stats.add(write_page(folder, "index.html", page("Compliance matrix", matrix.index_body(), [("matrix", None)])))
    stats.seconds = time.perf_counter() - started
    return stats


@dataclass(frozen=True)
class _Matrix:
    """The matrix's cases, runs and clauses, the pages' file names, and each clause's cases."""

    cases: Sequence[Case]
    runs: Sequence[ImplRun]
    clauses: Mapping[str, Clause]
    #: The clauses the cases cite: the registry's in its order, then unknown ones sorted.
    clause_ids: list[str]
    impl_files: dict[str, str]
    clause_files: dict[str, str]
    #: Per clause, the indexes of the cases that cite it.
    by_clause: dict[str, list[int]]

    @classmethod
    def of(cls, cases: Sequence[Case], runs: Sequence[ImplRun], clauses: Mapping[str, Clause]) -> _Matrix:
        cited = {clause for case in cases for clause in case.clauses}
        clause_ids = [clause for clause in clauses if clause in cited] + sorted(cited - set(clauses))
        by_clause = {clause: [index for index, case in enumerate(cases) if clause in case.clauses] for clause in clause_ids}
        impl_files = slugs([run.name for run in runs], prefix="i-")
        return cls(cases, runs, clauses, clause_ids, impl_files, slugs(clause_ids, prefix="c-"), by_clause)

    @property
    def head(self) -> str:
        """The implementations' column headings, each linking to its page."""
        return "".join(f'<th scope="col"><a href="{e(self.impl_files[run.name])}">{e(run.name)}</a></th>' for run in self.runs)

    def clause_body(self, clause: str) -> str:
        """A clause's page: its text, and its cases x implementations."""
        rows = []
        for index in self.by_clause[clause]:
            case = self.cases[index]
            cells = "".join(f"<td>{self._case_cell(run, index)}</td>" for run in self.runs)
            rows.append(
                f'<tr><th scope="row"><code>{e(case.id)}</code><br><span class="small muted">{e(get_profile(case.profile).group_label)} {e(case.lab)}: {e(case.description)}</span></th>{cells}</tr>'
            )
        text = e(self.clauses[clause].text) if clause in self.clauses else "(unknown clause)"
        return (
            f"<h1>{e(clause)}</h1><blockquote>{text}</blockquote><h2>Cases</h2>"
            f'<table class="matrix"><thead><tr><th scope="col">case</th>{self.head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        )

    def _case_cell(self, run: ImplRun, index: int) -> str:
        """One case's verdict for one implementation; a failure links to its trace diff, a skip says why."""
        outcome = run.outcomes[index]
        cell = badge(outcome.status)
        if outcome.status in ("failed", "errored"):
            case_id = self.cases[index].id
            return f'<a href="{e(self.impl_files[run.name])}#{anchor(case_id)}" title="{e(outcome.divergence or outcome.message)}">{cell} trace diff</a>'
        if outcome.status == "skipped":
            return f'<span title="{e(outcome.message)}">{cell}</span> <span class="small muted">{e(outcome.message)}</span>'
        return cell

    def index_body(self) -> str:
        """The matrix itself: one row per clause, one column per implementation, and the totals."""
        rows = []
        for clause in self.clause_ids:
            cells = []
            for run in self.runs:
                outcomes = [run.outcomes[index] for index in self.by_clause[clause]]
                cells.append(
                    f'<td><a href="{e(self.clause_files[clause])}">{badge(cell_status(outcomes))} <span class="small">{e(_cell_text(outcomes))}</span></a></td>'
                )
            known = self.clauses.get(clause)
            summary = e(known.text[:140] + ("…" if len(known.text) > 140 else "")) if known is not None else ""
            rows.append(
                f'<tr><th scope="row"><a href="{e(self.clause_files[clause])}">{e(clause)}</a><br><span class="small muted">{summary}</span></th>{"".join(cells)}</tr>'
            )
        totals = "".join(
            f'<td class="num">{sum(outcome.status == "passed" for outcome in run.outcomes)}/{len(run.outcomes)} cases passed</td>'
            for run in self.runs
        )
        return (
            f"<h1>Compliance matrix: {len(self.runs)} implementations, {len(self.clause_ids)} clauses, {len(self.cases)} cases</h1>"
            '<p class="small">Each cell: the clause\'s cases for that implementation: ✗ failed when any failed or errored, ○ skipped when all were skipped '
            "(a feature the implementation does not have, or a missing operation), else ✓ passed. Follow a cell for the cases and their trace diffs.</p>"
            f'<table class="matrix"><thead><tr><th scope="col">clause</th>{self.head}</tr></thead>'
            f'<tbody><tr><th scope="row">all cases</th>{totals}</tr>{"".join(rows)}</tbody></table>'
        )
