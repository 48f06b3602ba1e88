"""Which failing cases a report shows in full first: the "start here" of a student's feedback.

Per lab, the cases whose hint is about what diverged come first (a hint of another bug is
worse than none), then the rest in fixture order.
"""

from __future__ import annotations

from conformance.feedback import fitting_hint
from conformance.grading.formats.common import not_passed_by_lab
from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase


def hint_fits(graded: GradedCase) -> bool:
    """True when the case has a hint rung about what diverged (see :func:`conformance.feedback.fitting_hint`)."""
    return fitting_hint(graded.case, graded.outcome) is not None


def featured_by_lab(result: SubmissionResult, per_lab: int | None) -> dict[str, list[GradedCase]]:
    """Per lab with a failing case, the cases to show in full, best first (all of them for ``None``)."""
    chosen: dict[str, list[GradedCase]] = {}
    for lab, cases in not_passed_by_lab(result).items():
        ordered = sorted(cases, key=lambda graded: not hint_fits(graded))  # stable: fixture order otherwise
        chosen[lab] = ordered if per_lab is None else ordered[:per_lab]
    return chosen
