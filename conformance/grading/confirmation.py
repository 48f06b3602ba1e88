"""Public cases earn only what the held-out cases confirm (a rubric's ``public_cases: confirmed``, the default).

A table of public answers passes every public case and no held-out one. So, in a lab with
held-out cases, a public case's points are scaled by its *confirmation*: the share (by weight)
of their points that the held-out cases citing one of its clauses earn, or, when none does,
that the lab's held-out cases earn. A lookup table then earns nothing anywhere a private case
reaches; a correct submission loses nothing; a bug costs its public cases about as much as it
costs the held-out ones. ``public_cases: plain`` weighs every case alike.

The confirmation depends on held-out outcomes, so it never shows before grades are published:
each public case keeps its unconfirmed points as :attr:`GradedCase.unconfirmed_points` for what
students see, and Gradescope carries the difference in one held-out test per lab.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.grading.scoring import GradedCase


def _credit(cases: Sequence[GradedCase]) -> float:
    """The weight share of their points that ``cases`` earn (1 for cases of no weight)."""
    total = sum(graded.weight for graded in cases)
    if total <= 0:
        return 1.0
    return sum(graded.weight * (graded.points / graded.max_points if graded.max_points > 0 else 1.0) for graded in cases) / total


def confirmed(cases: Sequence[GradedCase]) -> list[GradedCase]:
    """One lab's graded cases, each public one scaled by what the lab's held-out cases confirm (unchanged without any)."""
    held = [graded for graded in cases if graded.held_out]
    if not held:
        return list(cases)
    lab_credit = _credit(held)
    result: list[GradedCase] = []
    for graded in cases:
        if graded.held_out:
            result.append(graded)
            continue
        clauses = set(graded.case.clauses)
        citing = [other for other in held if clauses & set(other.case.clauses)]
        share = _credit(citing) if citing else lab_credit
        result.append(replace(graded, points=graded.points * share, unconfirmed_points=graded.points))
    return result
