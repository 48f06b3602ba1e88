"""Every scoring mode of a graded submission side by side, to compare what each would give.

A rubric chooses one (``scoring_mode``, :mod:`conformance.grading.rubric`), and
:func:`conformance.grading.scoring.score` applies it. This module recomputes a lab's points
under each mode from one :class:`~conformance.grading.scoring.Score`, with the same
weighting code, so ``bench/scoring_spread.py`` can show what each gives one-bug projects
without grading them again:

- ``per-case`` (the default): a lab's points are shared by its cases by weight; a bug costs
  in proportion to how many cases observe it.
- ``per-clause``: each clause a lab's weighted cases cite weighs the same; a clause earns
  the share of its cases that earn their points. A bug costs in proportion to the clauses
  it breaks and how badly.
- ``capped``: per case, but what one cause (:mod:`conformance.judging.failure_groups`) costs in a
  lab is capped at ``cap`` of that lab's points.
"""

from __future__ import annotations

from collections import defaultdict

from conformance.grading.rubric import DEFAULT_CAUSE_CAP, SCORING_MODES
from conformance.grading.scoring import GradedCase, Score, cap_losses, per_clause_weights

MODES = SCORING_MODES
#: The default cap: one cause costs at most this share of a lab's points.
DEFAULT_CAP = DEFAULT_CAUSE_CAP


def lab_points(score: Score, mode: str, cap: float = DEFAULT_CAP) -> dict[str, float]:
    """Points per lab under ``mode`` (one of :data:`MODES`), from a per-case score."""
    if mode == "per-case":
        return {lab.lab: lab.points for lab in score.labs}
    by_lab: dict[str, list[GradedCase]] = defaultdict(list)
    for graded in score.cases:
        by_lab[graded.case.lab].append(graded)
    maxima = {lab.lab: lab.max_points for lab in score.labs}
    if mode == "per-clause":
        return {lab: _per_clause(by_lab.get(lab, []), maximum) for lab, maximum in maxima.items()}
    if mode == "capped":
        return {
            lab: max(0.0, sum(graded.points for graded in cap_losses(by_lab.get(lab, []), maximum, cap))) for lab, maximum in maxima.items()
        }
    raise ValueError(f"unknown scoring mode {mode!r}; known: {', '.join(MODES)}")


def _per_clause(cases: list[GradedCase], maximum: float) -> float:
    weights = per_clause_weights([graded.case for graded in cases], [graded.weight for graded in cases])
    total = sum(weights)
    if total <= 0:
        return maximum
    # A case earns its weight by the share of its points it earns (an excused case its lab's pass rate).
    earned = sum(
        weight * (graded.points / graded.max_points if graded.max_points > 0 else 0.0)
        for graded, weight in zip(cases, weights, strict=True)
    )
    return maximum * earned / total
