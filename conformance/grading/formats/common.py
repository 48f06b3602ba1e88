"""Helpers every report format shares: number formatting and grouping cases by lab."""

from __future__ import annotations

from collections import Counter

from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase, LabScore


def points(value: float) -> str:
    """Points as shown to people: two decimals."""
    return f"{value:.2f}"


def not_passed_by_lab(result: SubmissionResult, statuses: tuple[str, ...] = ("failed", "errored")) -> dict[str, list[GradedCase]]:
    """Cases with one of ``statuses``, grouped by lab in the rubric's order (labs without any left out).

    Cases an earlier lab's bug explains are left out: see :func:`inherited_groups`.
    """
    groups: dict[str, list[GradedCase]] = {}
    for graded in result.score.cases:
        if graded.outcome.status in statuses and graded.inherited is None:
            groups.setdefault(graded.case.lab, []).append(graded)
    return {lab.lab: groups[lab.lab] for lab in result.score.labs if lab.lab in groups}


def skipped_reasons(cases: list[GradedCase]) -> list[tuple[str, int]]:
    """The distinct reasons cases were skipped, most frequent first, with their counts."""
    counts = Counter(graded.outcome.message for graded in cases if graded.outcome.status == "skipped")
    return counts.most_common()


def lab_counts(lab: LabScore) -> str:
    """``(3 failed, 1 skipped)`` for a lab, or ``""`` when everything passed.

    Failed cases that an earlier lab's bug explains are counted apart: they cost nothing here.
    """
    parts = []
    for status in ("failed", "errored", "skipped"):
        count = lab.counts.get(status, 0) - (lab.inherited if status == "failed" else 0)
        if count:
            parts.append(f"{count} {status}")
    if lab.inherited:
        parts.append(f"{lab.inherited} failed because of an earlier lab, no points lost")
    return f"({', '.join(parts)})" if parts else ""


def inherited_groups(result: SubmissionResult) -> dict[tuple[str, tuple[str, ...]], list[GradedCase]]:
    """Cases an earlier lab's bug explains, grouped by that lab and their symptoms (first seen first)."""
    groups: dict[tuple[str, tuple[str, ...]], list[GradedCase]] = {}
    for graded in result.score.cases:
        if graded.inherited is not None:
            groups.setdefault((graded.inherited.lab, graded.inherited.symptoms), []).append(graded)
    return groups
