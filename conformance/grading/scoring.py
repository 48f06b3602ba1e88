"""Turn case outcomes into points: per case, per lab and in total, as the rubric says.

Only ``passed`` earns points; ``failed``, ``errored`` and ``skipped`` earn 0, except a
failed case that an earlier lab's bug explains (:mod:`conformance.grading.attribution`):
that bug is charged in its own lab, so the case earns its points here scaled by the pass
rate of the lab's own (not inherited) cases, by weight: all of them when the rest of the lab
passes, none when nothing of the lab's own works. A case's full points are ``lab weight x
case weight / sum of the lab's case weights``, so the per-case points of a lab add up to the
lab's score (what Gradescope's per-test scores need).

The rubric's ``scoring_mode`` changes two things, and per-case points still add up to the lab's:

- ``per-clause``: a case's weight is its share of each clause it cites
  (:func:`per_clause_weights`): every clause the lab's weighted cases cite weighs the same,
  and a clause earns the share (by weight) of its cases that pass;
- ``capped``: after per-case scoring, what one cause of failure
  (:mod:`conformance.judging.failure_groups`) costs in a lab is capped at ``cause_cap`` of the lab's
  points; the cause's cases get the difference back in proportion (:func:`cap_losses`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from conformance.grading.confirmation import confirmed
from conformance.grading.excusing import excuse
from conformance.grading.inherited import Inherited
from conformance.grading.rubric import Rubric, profile_groups
from conformance.judging.failure_groups import group_failures
from conformance.judging.outcome import STATUSES, Outcome
from conformance.model.cases import Case
from conformance.running.engine import NOT_RUN


@dataclass(frozen=True)
class GradedCase:
    """One case's outcome with its weight and points."""

    case: Case
    outcome: Outcome
    weight: float
    points: float
    max_points: float
    held_out: bool = False
    #: Set when the case failed only because of an earlier lab's bug (charged there).
    inherited: Inherited | None = None
    #: A public case's points before held-out cases confirmed them (:mod:`confirmation`); what students see before publication.
    unconfirmed_points: float | None = None

    @property
    def visible_points(self) -> float:
        """The points shown before grades are published: they never depend on a held-out outcome."""
        return self.points if self.unconfirmed_points is None else self.unconfirmed_points

    @property
    def passed(self) -> bool:
        """True when the case passed."""
        return self.outcome.status == "passed"

    @property
    def earns_points(self) -> bool:
        """True when the case earns points: it passed, or an earlier lab's bug explains its failure and its lab's own cases earn some."""
        return self.passed or (self.inherited is not None and self.inherited.share > 0)


@dataclass(frozen=True)
class LabScore:
    """One lab's points and case counts."""

    lab: str
    points: float
    max_points: float
    counts: Mapping[str, int]
    #: What the failed cases an earlier lab's bug explains still cost here: 0 when the lab's own cases all pass.
    inherited_lost: float = 0.0

    @property
    def passed(self) -> int:
        """Cases passed."""
        return self.counts.get("passed", 0)

    @property
    def total(self) -> int:
        """Cases run (or not run) in the lab."""
        return self.counts.get("total", 0)

    @property
    def inherited(self) -> int:
        """Failed cases that an earlier lab's bug explains (they cost only what :attr:`inherited_lost` says)."""
        return self.counts.get("inherited", 0)

    @property
    def not_run(self) -> int:
        """Errored cases that never ran (the budget ran out, grading was interrupted, the submission did not start)."""
        return self.counts.get("not_run", 0)


@dataclass(frozen=True)
class Score:
    """A whole submission's points."""

    cases: tuple[GradedCase, ...]
    labs: tuple[LabScore, ...]
    #: Per lab, the earlier labs whose code its cases never ran (lab isolation), as scoring was told.
    isolated: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def points(self) -> float:
        """Total points earned."""
        return sum(lab.points for lab in self.labs)

    @property
    def max_points(self) -> float:
        """Total points available."""
        return sum(lab.max_points for lab in self.labs)

    @property
    def passed(self) -> int:
        """Cases passed, over every lab."""
        return sum(lab.passed for lab in self.labs)

    @property
    def total(self) -> int:
        """Cases graded, over every lab."""
        return sum(lab.total for lab in self.labs)

    def lab(self, lab: str) -> LabScore | None:
        """The score of one lab, if the rubric grades it."""
        return next((score for score in self.labs if score.lab == lab), None)


def score(rubric: Rubric, results: Iterable[tuple[Case, Outcome]], isolated: Mapping[str, frozenset[str]] | None = None) -> Score:
    """Score the outcomes of a submission's cases (cases of labs the rubric omits are ignored).

    A visible case's points never depend on a held-out outcome (:mod:`conformance.grading.excusing`).
    ``isolated``: per lab, the earlier labs whose code its cases never ran (lab isolation), so no evidence for it.
    """
    by_lab: dict[str, list[tuple[Case, Outcome]]] = {lab: [] for lab in rubric.labs}
    for case, outcome in results:
        if case.lab in by_lab:
            by_lab[case.lab].append((case, outcome))
    # Earlier groups first, in the profile's order (labs 3.1 ... 4.2; the areas as the profile lists them).
    groups = profile_groups(rubric.profile)
    lab_order = sorted(rubric.labs, key=lambda lab: groups.index(lab) if lab in groups else len(groups))
    weighted = _weighted(rubric, by_lab)
    ordered = [pair for lab in lab_order for pair in by_lab[lab]]
    excused = excuse(ordered, lab_order, weighted, rubric.held_out, _case_weight(rubric), isolated)
    graded: list[GradedCase] = []
    labs: list[LabScore] = []
    for lab, rule in rubric.labs.items():
        lab_cases = [
            _graded(case, outcome, weighted[case.id], case.id in rubric.held_out, excused.get(case.id)) for case, outcome in by_lab[lab]
        ]
        if rubric.scoring_mode == "capped":
            lab_cases = _capped_by_phase(lab_cases, rubric.cause_cap)
        if rubric.public_cases == "confirmed":
            lab_cases = confirmed(lab_cases)
        graded.extend(lab_cases)
        labs.append(_lab_score(lab, rule.weight, lab_cases))
    return Score(tuple(graded), tuple(labs), dict(isolated or {}))


def _weighted(rubric: Rubric, by_lab: Mapping[str, list[tuple[Case, Outcome]]]) -> dict[str, tuple[float, float]]:
    """Per case id: its weight in its lab (by the rubric and its scoring mode) and its full points."""
    weighted: dict[str, tuple[float, float]] = {}
    for lab, rule in rubric.labs.items():
        cases = [case for case, _ in by_lab[lab]]
        weights = [rule.case_weight(case) for case in cases]
        if rubric.scoring_mode == "per-clause":
            weights = per_clause_weights(cases, weights)
        total = sum(weights)
        weighted.update(
            (case.id, (weight, rule.weight * weight / total if total > 0 else 0.0)) for case, weight in zip(cases, weights, strict=True)
        )
    return weighted


def _graded(case: Case, outcome: Outcome, weighted: tuple[float, float], held_out: bool, because: Inherited | None) -> GradedCase:
    """One case's points: all when it passed, its share when an earlier lab's bug excuses it, else none."""
    weight, max_points = weighted
    points = max_points if outcome.status == "passed" else max_points * because.share if because is not None else 0.0
    return GradedCase(case, outcome, weight, points, max_points, held_out, because)


def _capped_by_phase(cases: list[GradedCase], cap: float) -> list[GradedCase]:
    """``capped`` mode, visible and held-out cases apart: a visible case's refund never depends on a held-out failure."""
    capped = {id(graded): graded for graded in cases}
    for held_out in (False, True):
        phase = [graded for graded in cases if graded.held_out == held_out]
        maximum = sum(graded.max_points for graded in phase)
        capped.update((id(before), after) for before, after in zip(phase, cap_losses(phase, maximum, cap), strict=True))
    return [capped[id(graded)] for graded in cases]


def _lab_score(lab: str, weight: float, cases: Sequence[GradedCase]) -> LabScore:
    """A lab's points and counts from its graded cases."""
    counts: Counter[str] = Counter(graded.outcome.status for graded in cases)
    counts["inherited"] = sum(graded.inherited is not None for graded in cases)
    counts["not_run"] = sum(graded.outcome.status == "errored" and graded.outcome.message.startswith(NOT_RUN) for graded in cases)
    counts["total"] = len(cases)
    maximum = sum(graded.max_points for graded in cases)
    # Exactly the weight when nothing was lost, exactly 0 when nothing was earned.
    lost = sum(graded.max_points - graded.points for graded in cases)
    earned = (weight if lost <= 0 else weight * sum(graded.points for graded in cases) / maximum) if maximum > 0 else 0.0
    excused_lost = sum(graded.max_points - graded.points for graded in cases if graded.inherited is not None)
    counted = {key: counts.get(key, 0) for key in ("total", *STATUSES, "inherited", "not_run")}
    return LabScore(lab, earned, weight, counted, excused_lost)


def per_clause_weights(cases: Sequence[Case], weights: Sequence[float]) -> list[float]:
    """Case weights under which every clause the cases cite weighs the same (1), shared by its cases by ``weights``.

    A case's weight is the sum, over its clauses, of its share of the clause:
    ``weight / (sum of the weights of the cases citing that clause)``. A case of weight 0
    stays 0 and takes no share. So a lab's points are split equally among its clauses, and a
    clause earns the share of its cases (by weight) that pass: a bug costs in proportion to
    the clauses it breaks and how badly, not to how many cases observe it.
    """
    by_clause: dict[str, float] = {}
    for case, weight in zip(cases, weights, strict=True):
        for clause in dict.fromkeys(case.clauses):
            by_clause[clause] = by_clause.get(clause, 0.0) + weight
    return [
        sum(weight / by_clause[clause] for clause in dict.fromkeys(case.clauses) if by_clause[clause] > 0) if weight > 0 else 0.0
        for case, weight in zip(cases, weights, strict=True)
    ]


def cap_losses(cases: Sequence[GradedCase], maximum: float, cap: float) -> list[GradedCase]:
    """One lab's graded cases, with what each cause of failure costs capped at ``cap x maximum``.

    Failed and errored cases that lost points are grouped by cause
    (:func:`conformance.judging.failure_groups.group_failures`); a cause that lost more than the cap
    gives each of its cases back the same share of what it lost, so the cause costs exactly
    the cap. Skipped cases, and causes under the cap, cost what they cost.
    """
    limit = cap * maximum
    charged = [graded for graded in cases if graded.outcome.status in ("failed", "errored") and graded.points < graded.max_points]
    by_id = {graded.case.id: graded for graded in charged}
    kept: dict[str, float] = {}
    for group in group_failures(((graded.case, graded.outcome) for graded in charged), {}):
        members = [by_id[case.id] for case, _ in group.members]
        lost = sum(graded.max_points - graded.points for graded in members)
        if lost > limit:
            kept.update((graded.case.id, limit / lost) for graded in members)
    return [
        replace(graded, points=graded.max_points - (graded.max_points - graded.points) * kept[graded.case.id])
        if graded.case.id in kept
        else graded
        for graded in cases
    ]


def _case_weight(rubric: Rubric) -> Callable[[Case], float]:
    """A case's weight in its lab under ``rubric`` (0 for a lab the rubric omits)."""

    def weight(case: Case) -> float:
        rule = rubric.labs.get(case.lab)
        return rule.case_weight(case) if rule is not None else 0.0

    return weight
