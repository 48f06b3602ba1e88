# ruff: noqa: E501  (HTML templates read better as one line per element)
"""``run --html DIR``: one implementation's cases, failures grouped by cause, each with its trace diff."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.judging.failure_groups import group_failures, skip_reasons
from conformance.judging.outcome import STATUSES, Outcome
from conformance.model.cases import BrokenCase, Case
from conformance.model.clauses import Clause
from conformance.reports.formats.common import counted
from conformance.reports.html.casepage import case_section
from conformance.reports.html.class_site import SiteStats
from conformance.reports.html.layout import anchor, badge, e, page, write_page

Result = tuple[Case | BrokenCase, Outcome]


def lab_of(case: Case | BrokenCase) -> str:
    """A case's lab (or area), ``?`` for a broken fixture entry without one."""
    return str(getattr(case, "lab", None) or "?")


def implementation_body(name: str, results: Sequence[Result], clauses: Mapping[str, Clause], group_label: str = "lab") -> str:
    """The body of an implementation's page: per-lab counts, failures by cause with their traces, skip reasons."""
    parts = [f"<h1>{e(name)}</h1>"]
    labs = sorted({lab_of(case) for case, _ in results})
    rows = []
    for lab in labs:
        counts: Counter[str] = Counter(outcome.status for case, outcome in results if lab_of(case) == lab)
        total = sum(counts.values())
        cells = "".join(f'<td class="num">{counts.get(status, 0)}</td>' for status in STATUSES)
        rows.append(f'<tr><th scope="row">{e(group_label)} {e(lab)}</th>{cells}<td class="num">{total}</td></tr>')
    head = "".join(f'<th scope="col">{badge(status)}</th>' for status in STATUSES)
    parts.append(
        f'<h2 id="summary">Summary</h2><table><thead><tr><th scope="col">{e(group_label)}</th>{head}<th scope="col">total</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
    groups = group_failures(results, clauses)
    count = sum(len(group.members) for group in groups)
    if groups:
        parts.append(f'<h2 id="failures">Failures by cause ({counted(count, "case")} in {counted(len(groups), "group")})</h2>')
        toc = "".join(
            f'<li><a href="#group-{number}">{e(group.clause or "")} <code>{e(str(group.cause))}</code></a> ({len(group.members)})</li>'
            for number, group in enumerate(groups, start=1)
        )
        parts.append(f"<ol>{toc}</ol>")
    else:
        # No empty "Failures by cause (0 cases in 0 groups)" section: one line under the summary says it.
        parts.append("<p>No failures.</p>")
    for number, group in enumerate(groups, start=1):
        ids = "".join(f'<li><a href="#{anchor(case.id)}"><code>{e(case.id)}</code></a></li>' for case, _ in group.members)
        sections = "".join(case_section(case, outcome, clauses, heading="h4") for case, outcome in group.members)
        parts.append(
            f'<section id="group-{number}"><h3>[{number}] {len(group.members)} case{"s" if len(group.members) != 1 else ""}: '
            f'{e(group.clause or "")} <code>{e(str(group.cause))}</code></h3><ul class="cases small">{ids}</ul>{sections}</section>'
        )
    skipped = skip_reasons([outcome for _, outcome in results])
    if skipped:
        rows_html = "".join(f'<tr><td class="num">{number}</td><td>{e(reason)}</td></tr>' for reason, number in skipped)
        parts.append(
            f'<h2 id="skipped">Skipped</h2><table><thead><tr><th scope="col">cases</th><th scope="col">reason</th></tr></thead><tbody>{rows_html}</tbody></table>'
        )
    return "\n".join(parts)


@dataclass(frozen=True)
class RunPage:
    """What ``run --html`` shows, in the renderer's own terms (no runner state): one implementation's results."""

    #: The implementation's name, as the page's heading.
    name: str
    results: Sequence[Result]
    clauses: Mapping[str, Clause]
    #: What the page calls the groups cases are summed up by: ``lab``, or the profile's word (``area``).
    group_label: str = "lab"


def write_run_site(folder: Path, run: RunPage) -> SiteStats:
    """Write ``folder/index.html`` for one implementation's run."""
    started = time.perf_counter()
    stats = SiteStats(folder)
    body = implementation_body(run.name, list(run.results), run.clauses, run.group_label)
    stats.add(write_page(folder, "index.html", page(f"pi-conformance: {run.name}", body, [(run.name, None)])))
    stats.seconds = time.perf_counter() - started
    return stats
