"""When the reference fails a case, the case may be what is wrong: say so, with the clause that decides the value.

The bundled reference (and, for ``pi-ai-1``, the upstream package) passes every bundled case.
When it fails one, most often a fixture author wrote an expectation that does not follow the
spec. Such a failure must not read as an ordinary implementation failure labelled with the
case's first clause: :func:`expectation_note` tells the author to check the expected value
against the clause that decides it, and quotes that clause whole.
"""

from __future__ import annotations

from collections.abc import Mapping

from conformance.adapters.interface import Adapter
from conformance.judging.bearing import rank_clauses
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.model.clauses import Clause
from conformance.running.engine import AdapterFactory, Loop, Policy, close, run_one


def deciding_clause(case: Case, outcome: Outcome, clauses: Mapping[str, Clause]) -> str | None:
    """The cited clause that decides the diverging value: one that quotes it exactly (the spec says
    "`errorMessage` exactly ..."), else the one whose text names most of what diverged."""
    ranked = rank_clauses(case, outcome, clauses)
    return ranked[0] if ranked else None


def expectation_note(
    case: Case, outcome: Outcome, clauses: Mapping[str, Clause], reference: str = "the reference", alongside: bool = False
) -> str:
    """What to tell the author of a case that ``reference`` fails: check the expectation, against this clause.

    ``alongside``: the reference was run beside the implementation under test, which failed the case first.
    """
    fails = f"{reference}, run alongside, fails this case too" if alongside else f"{reference} fails this case"
    where = f"the expected value at {outcome.divergence.path or '(root)'}" if outcome.divergence is not None else "the expectation"
    clause_id = deciding_clause(case, outcome, clauses)
    if clause_id is None:
        return f"{fails}, so the case itself may be wrong: check {where} against the spec."
    clause = clauses.get(clause_id)
    text = " ".join(clause.text.split()) if clause is not None else "(unknown clause)"
    return (
        f"{fails}, so the case itself may be wrong: check {where} against {clause_id}, "
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


class CheckTheCase:
    """Whether a failing case may be wrong itself: say so ("[check the case]") only when it is true.

    It is true when the implementation under test *is* the profile's reference (whose expected
    values the cases were written from), or when that reference, run alongside on the same case,
    fails it too. An old version, a fork or a patched copy failing a case the reference passes
    is an implementation failing it: no note, or its porter would doubt a sound case.
    """

    def __init__(
        self,
        clauses: Mapping[str, Clause],
        under_test: str | None = None,
        alongside: tuple[str, AdapterFactory] | None = None,
        timeout_s: float | None = None,
    ) -> None:
        """``under_test``: the reference's name when it is what runs; ``alongside``: its name and a factory to run it beside another."""
        self.clauses = clauses
        self.under_test = under_test
        self.alongside = alongside
        self.timeout_s = timeout_s
        self._adapter: Adapter | None = None
        self._notes: dict[str, str | None] = {}

    def note(self, case: Case, outcome: Outcome) -> str | None:
        """The note for ``case``, which failed with ``outcome``; None when nothing says the case is wrong."""
        if self.under_test is not None:
            return expectation_note(case, outcome, self.clauses, f"the reference ({self.under_test})")
        if self.alongside is None:
            return None
        if case.id not in self._notes:
            self._notes[case.id] = self._run_alongside(case)
        return self._notes[case.id]

    def _run_alongside(self, case: Case) -> str | None:
        name, fresh = self.alongside  # type: ignore[misc]
        if self._adapter is None:
            self._adapter = fresh()
        theirs = run_one(self._adapter, case, fresh, Policy(timeout_s=self.timeout_s))
        # Only a divergence of its own: the reference erring (its sandbox, its start) says nothing of the case.
        if theirs.status != "failed":
            return None
        return expectation_note(case, theirs, self.clauses, f"the reference ({name})", alongside=True)

    def close(self) -> None:
        """Stop the reference run alongside, if it was started."""
        adapter, self._adapter = self._adapter, None
        if adapter is not None:
            close(adapter)
