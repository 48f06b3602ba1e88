"""Helpers every report format shares: number formatting and grouping cases by lab."""

from __future__ import annotations

from collections import Counter

from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase, LabScore


def points(value: float) -> str:
    """Points as shown to people: two decimals."""
    return f"{value:.2f}"


def not_passed_by_lab(result: SubmissionResult, statuses: tuple[str, ...] = ("failed", "errored")) -> dict[str, list[GradedCase]]:
    """Cases with one of ``statuses``, grouped by lab in the rubric's order (labs without any left out)."""
    groups: dict[str, list[GradedCase]] = {}
    for graded in result.score.cases:
        if graded.outcome.status in statuses:
            groups.setdefault(graded.case.lab, []).append(graded)
    return {lab.lab: groups[lab.lab] for lab in result.score.labs if lab.lab in groups}


def skipped_reasons(cases: list[GradedCase]) -> list[tuple[str, int]]:
    """The distinct reasons cases were skipped, most frequent first, with their counts."""
    counts = Counter(graded.outcome.message for graded in cases if graded.outcome.status == "skipped")
    return counts.most_common()


def lab_counts(lab: LabScore) -> str:
    """``(3 failed, 1 skipped)`` for a lab, or ``""`` when everything passed."""
    extra = ", ".join(f"{lab.counts.get(status, 0)} {status}" for status in ("failed", "errored", "skipped") if lab.counts.get(status, 0))
    return f"({extra})" if extra else ""
