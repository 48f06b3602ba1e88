"""The text a student reads for one case, in every report format.

Built on :func:`conformance.feedback.failure_report.failure_report` (first divergence with its path, case,
fixture file:line, step, clauses, event traces side by side, first hint rung), but quoting
each clause whole: a grading report is read once and carefully, a pytest log is skimmed.
"""

from __future__ import annotations

from collections.abc import Mapping

from conformance.feedback.failure_report import failure_report
from conformance.grading.scoring import GradedCase
from conformance.judging.bearing import rank_clauses
from conformance.judging.failure_groups import cause_of
from conformance.model.clauses import Clause
from conformance.model.profiles import get_profile

_ONE_LINE_LIMIT = 160


def case_feedback(graded: GradedCase, clauses: Mapping[str, Clause]) -> str:
    """Everything a student needs to act on a case that did not pass ("" for a passed case)."""
    case, outcome = graded.case, graded.outcome
    if outcome.status == "passed":
        return ""
    if outcome.status == "skipped":
        return "\n".join(
            [
                f"skipped: {outcome.message}",
                f"  case:    {case.id} ({get_profile(case.profile).group_label} {case.lab}): {case.description}",
                f"  fixture: {case.location}",
            ]
        )
    report = failure_report(case, outcome, clauses, clause_limit=None)
    found = cause_of(case, outcome)
    if found.kind == "died":
        # One sentence for the cause, whichever case met it first (the adapter's words differ between the two).
        report = "\n".join([str(found), *report.splitlines()[1:]])
    if graded.inherited is not None:
        report = f"{inherited_line(graded, clauses)}\n{report}"
    return report


def inherited_line(graded: GradedCase, clauses: Mapping[str, Clause]) -> str:
    """``fails because of lab 3.2 (AMS-2: result: same_object_as); fix that first ...`` ("" if not inherited)."""
    inherited = graded.inherited
    if inherited is None:
        return ""
    ranked = rank_clauses(inherited.evidence, inherited.evidence_outcome, clauses)
    return inherited.explanation(ranked[0] if ranked else None)


def one_line(graded: GradedCase, limit: int = _ONE_LINE_LIMIT) -> str:
    """The outcome's first line, cut to ``limit`` characters, for lists and gradebooks."""
    text = graded.outcome.message.strip().splitlines()[0] if graded.outcome.message.strip() else graded.outcome.status
    if graded.inherited is not None:
        text = f"(because of {graded.inherited.group_label} {graded.inherited.lab}) {text}"
    return text if len(text) <= limit else text[: limit - 1] + "…"
