"""The mutation report and its verdict: the score, and every survivor declared equivalent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from conformance.common.jsontypes import JsonObject
from conformance.mutation.operators import Mutant
from conformance.mutation.runner import Verdict, by_operator

EQUIVALENTS_FILE = Path(__file__).resolve().parent.parent.parent / "spec" / "equivalent-mutants.yaml"
MIN_SCORE = 0.97
UNDECLARED = "not declared in spec/equivalent-mutants.yaml: a fixture gap, or an equivalent mutant to declare with its reason"


@dataclass(frozen=True)
class Declared:
    """The checked-in list: equivalent mutants, and known fixture gaps awaiting their case."""

    equivalent: dict[str, str] = field(default_factory=dict)
    gaps: dict[str, str] = field(default_factory=dict)


def load_declared(path: Path = EQUIVALENTS_FILE) -> Declared:
    """``spec/equivalent-mutants.yaml``: ``equivalent`` and ``gaps``, each a list of ``{id, reason}``."""
    if not path.exists():
        return Declared()
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}

    def entries(key: str) -> dict[str, str]:
        return {str(entry["id"]): str(entry["reason"]) for entry in data.get(key) or []}

    return Declared(entries("equivalent"), entries("gaps"))


@dataclass
class MutationReport:
    """What ``mutation-report.json`` holds, and whether the run passes."""

    total: int
    killed: int
    equivalent: int
    survived: list[JsonObject]
    operators: dict[str, dict[str, int]]
    undeclared: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        """Killed over the mutants that can be killed at all: equivalent mutants leave the denominator.

        That is the usual definition: an equivalent mutant is the same program, so no suite
        could kill it. Every one must be declared, with its reason, to leave the count.
        """
        killable = self.total - self.equivalent
        return self.killed / killable if killable else 1.0

    def passes(self, min_score: float = MIN_SCORE) -> bool:
        """At least ``min_score`` killed, and every survivor declared equivalent."""
        return self.score >= min_score and not self.undeclared and not self.gaps

    def to_json(self) -> JsonObject:
        """The report file's content."""
        return {
            "total": self.total,
            "killed": self.killed,
            "equivalent": self.equivalent,
            "score": round(self.score, 4),
            "by_operator": {name: dict(counts) for name, counts in sorted(self.operators.items())},
            "survived": self.survived,  # type: ignore[dict-item]
            "undeclared": self.undeclared,  # type: ignore[dict-item]
            "gaps": self.gaps,  # type: ignore[dict-item]
            "stale_equivalents": self.stale,  # type: ignore[dict-item]
        }


def build_report(mutants: Sequence[Mutant], verdicts: Sequence[Verdict], declared: Declared, complete: bool) -> MutationReport:
    """Assemble the report; ``complete`` (every mutant was run) enables the stale-entry check."""
    by_id = {mutant.id: mutant for mutant in mutants}
    survived: list[JsonObject] = []
    undeclared: list[str] = []
    gaps: list[str] = []
    equivalent = 0
    for verdict in verdicts:
        if verdict.killed:
            continue
        mutant = by_id[verdict.mutant_id]
        reason = declared.equivalent.get(mutant.id)
        if reason is not None:
            equivalent += 1
        elif mutant.id in declared.gaps:
            gaps.append(mutant.id)
            reason = "fixture gap (observable, no case yet): " + declared.gaps[mutant.id]
        else:
            undeclared.append(mutant.id)
            reason = UNDECLARED
        survived.append({"id": mutant.id, "file": mutant.file, "line": mutant.line, "diff": mutant.diff, "reason": reason})
    surviving = {str(entry["id"]) for entry in survived}
    # A declared mutant that no longer exists or is now killed: the list must be kept honest.
    stale = sorted((set(declared.equivalent) | set(declared.gaps)) - surviving) if complete else []
    killed = sum(verdict.killed for verdict in verdicts)
    return MutationReport(len(verdicts), killed, equivalent, survived, by_operator(mutants, verdicts), undeclared, gaps, stale)
