"""Inside a chapter, a case that fails on another lab's clause is charged in that lab (attribution's rule 7).

The course's own tests cross labs within a chapter: its Lab 9.5 "steer, then abort" test
needs lab 9.4's abort check (AGENT-ABORT-4). A lab 9.4 bug then fails a lab 9.5 case through
observations of its own (a run that never settles there, a run that ends ``stop`` here), so
the shared symptoms of rules 2 and 5 cannot tie them together. The spec names the lab each clause of
chapters 05-09 belongs to ("(Lab 9.3; ...)", :attr:`conformance.model.clauses.Clause.lab`),
and a case lists every clause it depends on. So:

- a failed case of lab B is excused by an earlier lab A of its chapter when it cites a clause C that
  belongs to A, and A has charged failures that weigh more than 0 and cite C: the *evidence*
  of (A, C);
- what (A, C) excuses costs at most what its evidence costs A, so a planted failure in A buys
  back at most what it costs (the argument of :mod:`conformance.grading.symptom_homes`);
- only an earlier lab's clause excuses (the course's labs build on each other in order): where
  two labs' cases cite each other's clauses (the Lab 9.2 test needs lab 9.3's reducing order,
  lab 9.3's queue needs lab 9.2's admission of a new run), clauses cannot tell whose bug a
  failure is, and excusing the later lab's was seen to charge a lab 9.2 bug in lab 9.3;
- evidence that excused something is never excused itself, and an excused case is never
  evidence, so no bug is left charged nowhere; earlier labs' evidence is used first, the
  dearest first within a lab.

Rule 3 still applies: an excused case earns its own lab's pass rate over its own cases, so a
lab whose own code does not work earns nothing back. Chapters 03 and 04 name no labs in their
clauses, so this rule never applies there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from conformance.grading.inherited import Inherited
from conformance.grading.symptom_homes import chapter_of
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.model.clauses import clause_labs

#: Costs are sums of float shares: a tie must read as a tie.
_TOLERANCE = 1e-9

Failure = tuple[Case, Outcome, frozenset[str]]


def owned_elsewhere(
    left: Sequence[Failure],
    lab_order: Sequence[str],
    weight: Callable[[Case], float],
    cost: Callable[[Case], float],
    apart: Mapping[str, frozenset[str]],
) -> dict[str, Inherited]:
    """The failures in ``left`` (charged so far, in lab order) that a clause of another lab of their chapter explains."""
    evidence: dict[tuple[str, str], list[tuple[Case, Outcome]]] = {}
    for case, outcome, _ in left:
        owners = clause_labs(case.profile)
        if weight(case) > 0:
            for clause in case.clauses:
                if owners.get(clause) == case.lab:
                    evidence.setdefault((case.lab, clause), []).append((case, outcome))
    budgets = {key: sum(cost(case) for case, _ in pairs) for key, pairs in evidence.items()}
    excused: dict[str, Inherited] = {}
    used: set[str] = set()
    for owner, clause in sorted(evidence, key=lambda key: (lab_order.index(key[0]), -budgets[key], key[1])):
        pairs = [pair for pair in evidence[owner, clause] if pair[0].id not in excused]
        if not pairs:
            continue
        budget = sum(cost(case) for case, _ in pairs)
        for case, _, found in left:
            if case.id in excused or case.id in used or not _depends_on(case, owner, clause, lab_order, apart):
                continue
            if cost(case) > budget + _TOLERANCE:
                continue
            budget -= cost(case)
            first_case, first_outcome = pairs[0]
            symptoms = tuple(sorted(found)) or (clause,)
            excused[case.id] = Inherited(owner, first_case, first_outcome, symptoms, case.lab)
            used.update(evidence_case.id for evidence_case, _ in pairs)
    return excused


def _depends_on(case: Case, owner: str, clause: str, lab_order: Sequence[str], apart: Mapping[str, frozenset[str]]) -> bool:
    """Whether ``case``, of a later lab of ``owner``'s chapter whose code it runs, cites ``clause``."""
    return (
        chapter_of(case.lab) == chapter_of(owner)
        and lab_order.index(owner) < lab_order.index(case.lab)
        and owner not in apart.get(case.lab, ())
        and clause in case.clauses
    )
