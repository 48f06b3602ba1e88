"""Helpers every report format shares: number formatting, grouping cases by lab, naming the profile.

A "lab" here is a group of the rubric's profile: a lab of the course, an area of ``pi-ai-1``;
reports say which with :attr:`Rubric.group_label` and name a profile other than the course's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase, LabScore
from conformance.model.profiles import DEFAULT_PROFILE


def profile_of(result: SubmissionResult) -> str | None:
    """The profile to name in a report: None for the course's (its reports read as they always have)."""
    return None if result.rubric.profile == DEFAULT_PROFILE else result.rubric.profile


def points(value: float) -> str:
    """Points as shown to people: two decimals."""
    return f"{value:.2f}"


def counted(count: int, noun: str) -> str:
    """``1 case``, ``2 cases``: a count with its noun in the right number."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def skipped_reasons(cases: list[GradedCase]) -> list[tuple[str, int]]:
    """The distinct reasons cases were skipped, most frequent first, with their counts."""
    counts = Counter(graded.outcome.message for graded in cases if graded.outcome.status == "skipped")
    return counts.most_common()


def lab_counts(lab: LabScore, group_label: str = "lab") -> str:
    """``(3 failed, 1 skipped)`` for a lab (or area), or ``""`` when everything passed (see :func:`lab_parts`)."""
    parts = lab_parts(lab, group_label)
    return f"({', '.join(parts)})" if parts else ""


def excusing_lab(cases: Sequence[GradedCase], group_label: str = "lab") -> str:
    """``an earlier lab``, ``a later lab`` or ``another lab``: where the bug that excuses ``cases`` is charged.

    Mostly an earlier lab; inside a chapter a symptom's home may be a later lab
    (:mod:`conformance.grading.symptom_homes`), and the words follow it, as Gradescope's do.
    """
    homes = {graded.inherited.earlier for graded in cases if graded.inherited is not None}
    if homes == {False}:
        return f"a later {group_label}"
    return f"an earlier {group_label}" if homes <= {True} else f"another {group_label}"


def lab_parts(lab: LabScore, group_label: str = "lab", cases: Sequence[GradedCase] = ()) -> list[str]:
    """What a lab's cases that did not pass are: ``3 failed``, ``1 skipped``, ``2 not run``, ``43 excused (...)``.

    Failed cases that another lab's bug explains are excused, counted apart, with what they
    still cost (:func:`points_lost`): nothing when the lab's own cases all pass. ``cases``
    (the submission's graded cases) say whether that lab is earlier or later (:func:`excusing_lab`).
    """
    parts = []
    # Each case in one state (the Gradescope vocabulary, docs/grading.md): excused ones apart from
    # the failed, those never run apart from the errored.
    own = {"failed": lab.inherited, "errored": lab.not_run}
    for status in ("failed", "errored", "skipped"):
        count = lab.counts.get(status, 0) - own.get(status, 0)
        if count:
            parts.append(f"{count} {status}")
    if lab.not_run:
        parts.append(f"{lab.not_run} not run")
    if lab.inherited:
        excused = [graded for graded in cases if graded.case.lab == lab.lab]
        parts.append(f"{lab.inherited} excused (failed because of {excusing_lab(excused, group_label)}, {points_lost(lab.inherited_lost)})")
    return parts


def points_lost(lost: float) -> str:
    """``no points lost`` or ``1.25 points lost`` (as shown: a loss that rounds to 0.00 is none)."""
    return "no points lost" if points(lost) == points(0.0) else f"{points(lost)} points lost"


def excused_cost(cases: Sequence[GradedCase], group_label: str = "lab", show_points: bool = True) -> str:
    """What cases an earlier lab's bug explains cost here, as a clause of a sentence.

    ``these cost no points here`` when their lab's own cases all pass, else how many points
    they still cost and why (each earns its lab's own pass rate). Without ``show_points``
    (a student's page with held-out cases) it says the rule, not the number: the number
    would tell how the held-out cases of the lab did.
    """
    if not show_points:
        return f"each earns here the share of its points that its {group_label}'s own cases earn"
    lost = sum(graded.max_points - graded.points for graded in cases)
    if points(lost) == points(0.0):
        return "these cost no points here"
    return f"these cost {points(lost)} points here: each earns only its {group_label}'s own pass rate"


def inherited_groups(result: SubmissionResult) -> dict[tuple[str, tuple[str, ...]], list[GradedCase]]:
    """Cases an earlier lab's bug explains, grouped by that lab and their symptoms (first seen first)."""
    groups: dict[tuple[str, tuple[str, ...]], list[GradedCase]] = {}
    for graded in result.score.cases:
        if graded.inherited is not None:
            groups.setdefault((graded.inherited.lab, graded.inherited.symptoms), []).append(graded)
    return groups
