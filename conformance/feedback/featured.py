"""Which failing cases a report shows in full first: the "start here" of a student's feedback.

One case per cause (:mod:`conformance.judging.failure_groups`): a bug that fails forty cases is
shown once, by the member that shows it where it originates, so the next case shown is
another bug. Per lab, the causes whose shown case has a hint about what diverged come
first (a hint of another bug is worse than none), then the largest causes. A cause that
spans labs (a module that kills the program on import) is shown in its first lab only.
"""

from __future__ import annotations

from collections.abc import Mapping

from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase
from conformance.judging.bearing import fitting_hint
from conformance.judging.failure_groups import FailureGroup, group_failures, origin_rank
from conformance.judging.root_causes import depth
from conformance.model.clauses import Clause


def hint_fits(graded: GradedCase) -> bool:
    """True when the case has a hint rung about what diverged (see :func:`conformance.judging.bearing.fitting_hint`)."""
    return fitting_hint(graded.case, graded.outcome) is not None


def failure_groups_of(result: SubmissionResult, clauses: Mapping[str, Clause] | None = None) -> list[FailureGroup]:
    """The submission's charged failures (not those an earlier lab explains) grouped by cause."""
    cases = [graded for graded in result.score.cases if graded.outcome.status in ("failed", "errored") and graded.inherited is None]
    return group_failures(((graded.case, graded.outcome) for graded in cases), clauses or {})


def featured_by_lab(result: SubmissionResult, per_lab: int | None) -> dict[str, list[GradedCase]]:
    """Per lab with a failing case, the cases to show in full, best first (every failing case for ``None``)."""
    failing = not_passed_by_lab(result)
    if per_lab is None:
        return {
            lab: sorted(cases, key=lambda graded: (not hint_fits(graded), origin_rank(graded.outcome))) for lab, cases in failing.items()
        }
    by_id = {graded.case.id: graded for cases in failing.values() for graded in cases}
    chosen: dict[str, list[GradedCase]] = {lab: [] for lab in failing}
    for group in failure_groups_of(result):
        members = [by_id[case.id] for case, _ in group.members if case.id in by_id]
        if not members:
            continue
        # The cause's best case: one of its own (a linked member shows another symptom of it), in the
        # function the others use (one bug is shown where it is), then one whose hint fits, nearest
        # the origin, in fixture order.
        best = min(
            members,
            key=lambda graded: (graded.case.id in group.linked, depth(graded.case), not hint_fits(graded), origin_rank(graded.outcome)),
        )
        chosen[best.case.lab].append(best)
    featured: dict[str, list[GradedCase]] = {}
    for lab, cases in chosen.items():
        ordered = sorted(cases, key=lambda graded: not hint_fits(graded))  # stable: the largest cause first otherwise
        if ordered:
            featured[lab] = ordered[:per_lab]
    return featured


def not_passed_by_lab(result: SubmissionResult, statuses: tuple[str, ...] = ("failed", "errored")) -> dict[str, list[GradedCase]]:
    """Cases with one of ``statuses``, grouped by lab in the rubric's order (labs without any left out).

    Cases an earlier lab's bug explains are left out: see :func:`inherited_groups`.
    """
    groups: dict[str, list[GradedCase]] = {}
    for graded in result.score.cases:
        if graded.outcome.status in statuses and graded.inherited is None:
            groups.setdefault(graded.case.lab, []).append(graded)
    return {lab.lab: groups[lab.lab] for lab in result.score.labs if lab.lab in groups}
