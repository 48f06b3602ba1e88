"""Other ways to turn a graded submission into points, to compare with the rubric's per-case weighting.

- ``per-case`` (the rubric's, :mod:`conformance.grading.scoring`): a lab's points are
  shared by its cases by weight; a bug costs in proportion to how many cases observe it.
- ``per-clause``: each clause a lab's weighted cases cite weighs the same; a clause earns
  the share of its cases that earn their points. A bug costs in proportion to the clauses
  it breaks and how badly.
- ``capped``: per case, but what one cause (:mod:`conformance.judging.failure_groups`) costs in a
  lab is capped at ``cap`` of that lab's points.

These are computed from a :class:`~conformance.grading.scoring.Score`, not yet selectable
in a rubric: ``bench/scoring_spread.py`` shows what each would give one-bug projects.
"""

from __future__ import annotations

from collections import defaultdict

from conformance.grading.scoring import GradedCase, Score
from conformance.judging.failure_groups import group_failures

MODES = ("per-case", "per-clause", "capped")
#: The default cap: one cause costs at most this share of a lab's points.
DEFAULT_CAP = 0.4


def lab_points(score: Score, mode: str, cap: float = DEFAULT_CAP) -> dict[str, float]:
    """Points per lab under ``mode`` (one of :data:`MODES`)."""
    if mode == "per-case":
        return {lab.lab: lab.points for lab in score.labs}
    by_lab: dict[str, list[GradedCase]] = defaultdict(list)
    for graded in score.cases:
        by_lab[graded.case.lab].append(graded)
    maxima = {lab.lab: lab.max_points for lab in score.labs}
    if mode == "per-clause":
        return {lab: _per_clause(by_lab.get(lab, []), maximum) for lab, maximum in maxima.items()}
    if mode == "capped":
        return {lab: _capped(by_lab.get(lab, []), maximum, cap) for lab, maximum in maxima.items()}
    raise ValueError(f"unknown scoring mode {mode!r}; known: {', '.join(MODES)}")


def _per_clause(cases: list[GradedCase], maximum: float) -> float:
    weighted = [graded for graded in cases if graded.max_points > 0]
    cited: dict[str, list[GradedCase]] = defaultdict(list)
    for graded in weighted:
        for clause in graded.case.clauses:
            cited[clause].append(graded)
    if not cited:
        return maximum
    share = maximum / len(cited)
    return sum(share * sum(graded.earns_points for graded in members) / len(members) for members in cited.values())


def _capped(cases: list[GradedCase], maximum: float, cap: float) -> float:
    charged = [graded for graded in cases if not graded.earns_points and graded.outcome.status in ("failed", "errored")]
    groups = group_failures(((graded.case, graded.outcome) for graded in charged), {})
    lost_points = {graded.case.id: graded.max_points - graded.points for graded in charged}
    lost_by_cause = {index: sum(lost_points[case.id] for case, _ in group.members) for index, group in enumerate(groups)}
    other = sum(graded.max_points - graded.points for graded in cases if graded.outcome.status not in ("failed", "errored"))
    lost = sum(min(value, cap * maximum) for value in lost_by_cause.values()) + other
    return max(0.0, maximum - lost)
