"""Which failed cases an earlier lab's bug excuses, and what share of its points each earns back.

:func:`conformance.grading.attribution.attribute` finds the evidence; this module applies
attribution's rules 3 and 4 on top of it:

- **Visible from visible.** Cases students see are attributed among the visible cases only,
  and their share is their lab's own pass rate *over visible cases*. Held-out cases are
  attributed among all cases (their results are hidden until grades are published anyway).
  A held-out case's share is its lab's own pass rate over held-out cases, so that public
  answers cannot lift it. So two submissions that differ only in how the held-out cases go get the same visible
  points and text, byte for byte: no oracle before publication, no channel out of the
  held-out phase.
- **No refund cap.** Capping what excused cases earn back by what their evidence lost made a
  lab 3.2 bug seen by 82 lab 4 cases cost lab 4 points again (its cost followed how many
  fixtures touch it), so it is not applied. A failure planted in lab 4.1, with the symptom of
  a real lab 4.2 bug, excuses nothing: inside a chapter a symptom is charged where it costs
  most (:mod:`conformance.grading.symptom_homes`, ``tests/grading/test_planted_evidence.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from conformance.grading.attribution import attribute
from conformance.grading.inherited import Inherited
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case

#: Per case id: its weight in its lab and its full points.
Weighted = Mapping[str, tuple[float, float]]


def excuse(
    ordered: Sequence[tuple[Case, Outcome]],
    lab_order: Sequence[str],
    weighted: Weighted,
    held_out: frozenset[str],
    weight_of: Callable[[Case], float],
    isolated: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, Inherited]:
    """The excused cases by id, each with the share of its points it earns (``Inherited.share``).

    ``ordered`` holds every graded case, earlier labs first; ``held_out`` the ids students do
    not see before publication; ``isolated`` the earlier labs whose code a lab's cases never run.
    """

    def cost(case: Case) -> float:
        return weighted[case.id][1]

    visible = [pair for pair in ordered if pair[0].id not in held_out]
    seen = attribute(visible, lab_order, weight_of, cost, isolated)
    hidden = {case_id: why for case_id, why in attribute(ordered, lab_order, weight_of, cost, isolated).items() if case_id in held_out}
    seen = _shared(seen, own_pass_rates(visible, seen, weighted))
    everything = {**hidden, **seen}
    # Over held-out cases only: public answers (a table of them) must not lift a held-out case's share.
    hidden = _shared(hidden, own_pass_rates([pair for pair in ordered if pair[0].id in held_out], everything, weighted))
    return {**hidden, **seen}


def own_pass_rates(pairs: Iterable[tuple[Case, Outcome]], excused: Mapping[str, Inherited], weighted: Weighted) -> dict[str, float]:
    """Per lab, the weight share of its own (not excused) cases among ``pairs`` that pass; 0 when it has none."""
    own: dict[str, list[tuple[bool, float]]] = {}
    for case, outcome in pairs:
        if case.id not in excused:
            own.setdefault(case.lab, []).append((outcome.status == "passed", weighted[case.id][0]))
    rates: dict[str, float] = {}
    for lab, cases in own.items():
        total = sum(weight for _, weight in cases)
        rates[lab] = sum(weight for passed, weight in cases if passed) / total if total > 0 else 0.0
    return rates


def _shared(excused: Mapping[str, Inherited], rates: Mapping[str, float]) -> dict[str, Inherited]:
    """Each excused case with its lab's own pass rate as its share (the rate of the case's own lab, not the evidence's)."""
    return {case_id: replace(why, share=rates.get(why.excused_lab, 0.0)) for case_id, why in excused.items()}
