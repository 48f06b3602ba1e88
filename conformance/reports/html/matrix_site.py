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
from conformance.loading.cases import Case
from conformance.reports.html.class_site import SiteStats
from conformance.reports.html.layout import anchor, badge, e, page, slugs, write_page
from conformance.reports.html.run_site import implementation_body
from conformance.spec.clauses import Clause
from conformance.spec.profiles import get_profile


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
    impl_files = slugs([run.name for run in runs], prefix="i-")
    cited = {clause for case in cases for clause in case.clauses}
    clause_ids = [clause for clause in clauses if clause in cited] + sorted(cited - set(clauses))
    clause_files = slugs(clause_ids, prefix="c-")
    by_clause = {clause: [index for index, case in enumerate(cases) if clause in case.clauses] for clause in clause_ids}
    for run in runs:
        body = implementation_body(run.name, list(zip(cases, run.outcomes, strict=True)), clauses)
        stats.add(write_page(folder, impl_files[run.name], page(run.name, body, [("matrix", "index.html"), (run.name, None)])))
    head = "".join(f'<th scope="col"><a href="{e(impl_files[run.name])}">{e(run.name)}</a></th>' for run in runs)
    for clause in clause_ids:
        rows = []
        for index in by_clause[clause]:
            case = cases[index]
            cells = []
            for run in runs:
                outcome = run.outcomes[index]
                cell = badge(outcome.status)
                if outcome.status in ("failed", "errored"):
                    cell = f'<a href="{e(impl_files[run.name])}#{anchor(case.id)}" title="{e(outcome.divergence or outcome.message)}">{cell} trace diff</a>'
                elif outcome.status == "skipped":
                    cell = f'<span title="{e(outcome.message)}">{cell}</span> <span class="small muted">{e(outcome.message)}</span>'
                cells.append(f"<td>{cell}</td>")
            rows.append(
                f'<tr><th scope="row"><code>{e(case.id)}</code><br><span class="small muted">{e(get_profile(case.profile).group_label)} {e(case.lab)}: {e(case.description)}</span></th>{"".join(cells)}</tr>'
            )
        text = e(clauses[clause].text) if clause in clauses else "(unknown clause)"
        body = (
            f"<h1>{e(clause)}</h1><blockquote>{text}</blockquote><h2>Cases</h2>"
            f'<table class="matrix"><thead><tr><th scope="col">case</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        )
        stats.add(write_page(folder, clause_files[clause], page(clause, body, [("matrix", "index.html"), (clause, None)])))
    rows = []
    for clause in clause_ids:
        cells = []
        for run in runs:
            outcomes = [run.outcomes[index] for index in by_clause[clause]]
            status = cell_status(outcomes)
            cells.append(
                f'<td><a href="{e(clause_files[clause])}">{badge(status)} <span class="small">{e(_cell_text(outcomes))}</span></a></td>'
            )
        summary = e(clauses[clause].text[:140] + ("…" if len(clauses[clause].text) > 140 else "")) if clause in clauses else ""
        rows.append(
            f'<tr><th scope="row"><a href="{e(clause_files[clause])}">{e(clause)}</a><br><span class="small muted">{summary}</span></th>{"".join(cells)}</tr>'
        )
    totals = "".join(
        f'<td class="num">{sum(outcome.status == "passed" for outcome in run.outcomes)}/{len(run.outcomes)} cases passed</td>'
        for run in runs
    )
    body = (
        f"<h1>Compliance matrix: {len(runs)} implementations, {len(clause_ids)} clauses, {len(cases)} cases</h1>"
        '<p class="small">Each cell: the clause\'s cases for that implementation: ✗ failed when any failed or errored, ○ skipped when all were skipped '
        "(a feature the implementation does not have, or a missing operation), else ✓ passed. Follow a cell for the cases and their trace diffs.</p>"
        f'<table class="matrix"><thead><tr><th scope="col">clause</th>{head}</tr></thead>'
        f'<tbody><tr><th scope="row">all cases</th>{totals}</tr>{"".join(rows)}</tbody></table>'
    )
    stats.add(write_page(folder, "index.html", page("Compliance matrix", body, [("matrix", None)])))
    stats.seconds = time.perf_counter() - started
    return stats
