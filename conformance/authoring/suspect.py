"""When the reference fails a case, the case may be what is wrong: say so, with the clause that decides the value.

The bundled reference (and, for ``pi-ai-1``, the upstream package) passes every bundled case.
When it fails one, most often a fixture author wrote an expectation that does not follow the
spec. Such a failure must not read as an ordinary implementation failure labelled with the
case's first clause: :func:`expectation_note` tells the author to check the expected value
against the clause that decides it, and quotes that clause whole.
"""

from __future__ import annotations

from collections.abc import Mapping

from conformance.judging.bearing import rank_clauses
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.model.clauses import Clause
from conformance.running.engine import AdapterFactory, Loop, Policy


def deciding_clause(case: Case, outcome: Outcome, clauses: Mapping[str, Clause]) -> str | None:
    """The cited clause that decides the diverging value: one that quotes it exactly (the spec says
    "`errorMessage` exactly ..."), else the one whose text names most of what diverged."""
    ranked = rank_clauses(case, outcome, clauses)
    return ranked[0] if ranked else None


def expectation_note(case: Case, outcome: Outcome, clauses: Mapping[str, Clause], reference: str = "the reference") -> str:
    """What to tell the author of a case that ``reference`` fails: check the expectation, against this clause."""
    where = f"the expected value at {outcome.divergence.path or '(root)'}" if outcome.divergence is not None else "the expectation"
    clause_id = deciding_clause(case, outcome, clauses)
    if clause_id is None:
        return f"{reference} fails this case, so the case itself may be wrong: check {where} against the spec."
    clause = clauses.get(clause_id)
    text = " ".join(clause.text.split()) if clause is not None else "(unknown clause)"
    return (
        f"{reference} fails this case, so the case itself may be wrong: check {where} against {clause_id}, "
        f"the clause that decides it (a value the spec does not prescribe is a fixture bug; one it does, a reference bug).\n"
        f"  {clause_id}: {text}"
    )


def reference_failures(suite: Suite, fresh: AdapterFactory, clauses: Mapping[str, Clause], reference: str) -> list[str]:
    """One paragraph per case of ``suite`` that the reference (``fresh`` starts it) does not pass, saying what to check.

    The cases run on the engine's loop, as ``run`` runs them.
    """
    found: list[str] = []
    outcomes = Loop(Policy(), fresh).run(fresh(), suite.cases)
    for case, outcome in zip(suite.cases, outcomes, strict=True):
        if outcome.status in ("failed", "errored"):
            what = str(outcome.divergence) if outcome.divergence is not None else outcome.message.strip().splitlines()[0]
            found.append(f"{case.id} ({case.location}): {what}\n  {expectation_note(case, outcome, clauses, reference)}")
    found.extend(f"{broken.id} ({broken.location}): broken fixture: {'; '.join(broken.problems)}" for broken in suite.broken)
    return found
