"""``fixtures coverage``: each clause of the spec against the cases that cite it.

Clauses that no case checks come first, so the gap is the first thing a reader sees; within
each group clauses keep their order in ``spec/spec.md``. A clause marked *withdrawn* needs
no case and is listed last. A clause marked *cases pending* is in force but waits for the
fixture vocabulary its cases need (chapter 09's Agent scenarios): until a case cites it, it is
listed as pending, after the unchecked ones, and does not fail ``--check``.

Each clause also counts its cases that carry a ``hint:``: a checked clause none of whose
cases has one is *unhinted*, and a student who breaks it gets no advice at all
(:meth:`Coverage.hint_summary` names them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from conformance.judging.bearing import unshowable_hint
from conformance.model.cases import Case
from conformance.model.clauses import Clause
from conformance.model.features import beyond_chapter_sources

Status = Literal["unchecked", "pending", "checked", "withdrawn"]
#: The marker of a clause whose cases wait for a fixture vocabulary (spec/spec.md, Conventions).
PENDING_MARKER = "*cases pending*"
_EXCERPT = 70


@dataclass(frozen=True)
class ClauseCoverage:
    """One clause and the ids of the cases that cite it."""

    id: str
    line: int
    text: str
    cases: tuple[str, ...]
    #: The cases among ``cases`` that carry a hint.
    hinted: tuple[str, ...] = ()

    @property
    def beyond_chapter(self) -> tuple[str, ...]:
        """Sources of the clause's ``[beyond-chapter: SOURCE]`` markers (empty: the chapter text states it)."""
        return beyond_chapter_sources(self.text)

    @property
    def status(self) -> Status:
        """``unchecked`` when no case cites a clause in force (``pending`` when it says its cases are to come)."""
        if "*withdrawn*" in self.text:
            return "withdrawn"
        if self.cases:
            return "checked"
        return "pending" if PENDING_MARKER in self.text else "unchecked"

    @property
    def unhinted(self) -> bool:
        """True for a checked clause none of whose cases has a hint."""
        return self.status == "checked" and not self.hinted


@dataclass(frozen=True)
class Coverage:
    """The coverage table: rows in report order and the spec version they refer to."""

    version: str
    rows: tuple[ClauseCoverage, ...]
    broken: int = 0

    def count(self, status: Status) -> int:
        """How many clauses have this status."""
        return sum(1 for row in self.rows if row.status == status)

    @property
    def unchecked(self) -> list[str]:
        """Ids of the clauses in force that no case cites."""
        return [row.id for row in self.rows if row.status == "unchecked"]

    @property
    def pending(self) -> list[str]:
        """Ids of the clauses in force whose cases are still to come (marked *cases pending*)."""
        return [row.id for row in self.rows if row.status == "pending"]

    @property
    def unhinted(self) -> list[str]:
        """Ids of the checked clauses none of whose cases has a hint, in spec order."""
        return [row.id for row in sorted(self.rows, key=lambda row: row.line) if row.unhinted]

    def hint_summary(self) -> str:
        """One line: how many checked clauses have a case with a hint, and which have none."""
        checked = self.count("checked")
        if checked and len(self.unhinted) == checked:
            # A profile whose cases carry no hints at all (pi-ai-1): one line, not every clause.
            return f"hints: none of the {checked} checked clause{'s' if checked != 1 else ''} has a case with a hint"
        line = f"hints: {checked - len(self.unhinted)}/{checked} checked clauses have a case with a hint"
        if self.unhinted:
            line += "; none for " + ", ".join(self.unhinted)
        return line

    def summary(self) -> str:
        """One line: how many clauses are checked."""
        in_force = len(self.rows) - self.count("withdrawn")
        line = f"coverage: {self.count('checked')}/{in_force} clauses checked by at least one case"
        if self.unchecked:
            line += "; unchecked: " + ", ".join(self.unchecked)
        if self.pending:
            line += f"; {len(self.pending)} pending (cases to come): " + ", ".join(self.pending)
        beyond = [row for row in self.rows if row.beyond_chapter]
        if beyond:
            sources: dict[str, int] = {}
            for row in beyond:
                for source in dict.fromkeys(row.beyond_chapter):
                    sources[source] = sources.get(source, 0) + 1
            named = ", ".join(f"{source} {count}" for source, count in sorted(sources.items()))
            line += f"; {len(beyond)} go beyond the chapter text ({named})"
        if self.broken:
            line += f" ({self.broken} broken case(s) not counted; run `pi-conformance fixtures lint`)"
        return line


def by_case_count(coverage: Coverage) -> Coverage:
    """The same table, clauses in force checked by the fewest cases first (then spec order); withdrawn ones last."""
    rows = sorted(coverage.rows, key=lambda row: (row.status == "withdrawn", len(row.cases)))
    return Coverage(coverage.version, tuple(rows), coverage.broken)


def compute(clauses: Mapping[str, Clause], cases: list[Case], version: str, broken: int = 0) -> Coverage:
    """Coverage of ``clauses`` (in spec order) by ``cases``."""
    citing: dict[str, list[str]] = {clause_id: [] for clause_id in clauses}
    hinted: dict[str, list[str]] = {clause_id: [] for clause_id in clauses}
    for case in cases:
        for clause_id in case.clauses:
            if clause_id in citing:
                citing[clause_id].append(case.id)
                if case.hint and unshowable_hint(case) is None:  # a hint no failure can show advises nobody
                    hinted[clause_id].append(case.id)
    rows = [
        ClauseCoverage(clause.id, clause.line, clause.text, tuple(citing[clause.id]), tuple(hinted[clause.id]))
        for clause in clauses.values()
    ]
    order: dict[Status, int] = {"unchecked": 0, "pending": 1, "checked": 2, "withdrawn": 3}
    # sorted() is stable, so spec order survives inside each group.
    return Coverage(version, tuple(sorted(rows, key=lambda row: order[row.status])), broken)


def to_markdown(coverage: Coverage) -> str:
    """A Markdown report: summary line, then one table row per clause."""
    lines = [
        f"# Clause coverage (spec {coverage.version})",
        "",
        coverage.summary(),
        "",
        coverage.hint_summary(),
        "",
        "| clause | says | status | beyond the chapter | cases | checked by | hinted cases |",
        "|---|---|---|---|---:|---|---:|",
    ]
    for row in coverage.rows:
        cited = ", ".join(f"`{case_id}`" for case_id in row.cases) or "**none**"
        says = _excerpt(row.text).replace("|", "\\|")
        beyond = ", ".join(row.beyond_chapter)
        hints = "**none**" if row.unhinted else str(len(row.hinted))
        lines.append(f"| {row.id} | {says} | {row.status} | {beyond} | {len(row.cases)} | {cited} | {hints} |")
    return "\n".join(lines) + "\n"


def to_json(coverage: Coverage) -> str:
    """A JSON report with the same rows, for tools."""
    document = {
        "spec_version": coverage.version,
        "summary": {
            "clauses": len(coverage.rows),
            "checked": coverage.count("checked"),
            "unchecked": coverage.count("unchecked"),
            "pending": coverage.count("pending"),
            "withdrawn": coverage.count("withdrawn"),
            "beyond_chapter": sum(1 for row in coverage.rows if row.beyond_chapter),
            "broken_cases": coverage.broken,
            "unhinted": len(coverage.unhinted),
        },
        "clauses": [
            {
                "id": row.id,
                "status": row.status,
                "spec_line": row.line,
                "text": _excerpt(row.text),
                "cases": list(row.cases),
                "hinted_cases": list(row.hinted),
                "beyond_chapter": list(row.beyond_chapter),
            }
            for row in coverage.rows
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"
