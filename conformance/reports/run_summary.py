"""Summaries and the JSON report of a run: per lab, per cause (failure groups), per case."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from conformance.common.student_text import scrub
from conformance.judging.divergences import all_divergences
from conformance.judging.failure_groups import FailureGroup, group_failures, skip_reasons
from conformance.judging.outcome import STATUSES, Outcome
from conformance.model.cases import BrokenCase, Case
from conformance.model.clauses import Clause
from conformance.model.features import is_not_claimed
from conformance.model.profiles import DEFAULT_PROFILE, get_profile


@dataclass(frozen=True)
class CaseResult:
    """One case's outcome with the metadata reports group by."""

    outcome: Outcome
    lab: str
    chapter: str
    case: Case | BrokenCase | None = None
    #: Why the case itself may be wrong (the profile's reference fails it too), or None: see
    #: :class:`~conformance.authoring.suspect.CheckTheCase`.
    check_the_case: str | None = None


def summary(results: Iterable[CaseResult]) -> dict[str, int]:
    """Counts per status, plus the total; skipped cases whose feature is not claimed are counted apart (``not_claimed``)."""
    results = list(results)
    counts: Counter[str] = Counter(result.outcome.status for result in results)
    not_claimed = sum(1 for result in results if _not_claimed(result))
    counts["skipped"] -= not_claimed
    counted: dict[str, int] = {"total": len(results), **{status: counts.get(status, 0) for status in STATUSES}}
    return {**counted, "not_claimed": not_claimed} if not_claimed else counted


def _not_claimed(result: CaseResult) -> bool:
    return result.outcome.status == "skipped" and is_not_claimed(result.outcome.message)


def summary_lines(results: list[CaseResult], impl_name: str, profile: str = DEFAULT_PROFILE) -> list[str]:
    """A per-lab (per-area for another profile) table and a total line, for the terminal."""
    if profile == DEFAULT_PROFILE:
        lines = [f"pi-conformance: {impl_name}"]
        label, width = "lab", 4
    else:
        lines = [f"pi-conformance: {impl_name} (profile {profile})"]
        label, width = get_profile(profile).group_label, 13
    for lab in sorted({result.lab for result in results}):
        counts = summary(result for result in results if result.lab == lab)
        extra = ", ".join(f"{counts[status]} {status}" for status in STATUSES[1:] if counts[status])
        if counts.get("not_claimed"):
            extra += (", " if extra else "") + f"{counts['not_claimed']} not claimed"
        lines.append(f"  {label} {lab:<{width}} {counts['passed']:>4}/{counts['total']:<4} passed" + (f"  ({extra})" if extra else ""))
    total = summary(results)
    not_claimed = f", {total['not_claimed']} not claimed" if total.get("not_claimed") else ""
    lines.append("  total    " + ", ".join(f"{total[key]} {key}" for key in ("total", *STATUSES)) + not_claimed)
    return lines


def group_lines(groups: list[FailureGroup], example: Callable[[Case | BrokenCase, Outcome], str], ids_shown: int = 8) -> list[str]:
    """Each failure group once: its count and cause, the case ids, and one full example."""
    if not groups:
        return []
    count = sum(len(group.members) for group in groups)
    lines = ["", f"failures by cause: {count} case{'s' if count != 1 else ''} in {len(groups)} group{'s' if len(groups) != 1 else ''}"]
    for number, group in enumerate(groups, start=1):
        ids = [case.id for case, _ in group.members]
        more = f", and {len(ids) - ids_shown} more" if len(ids) > ids_shown else ""
        lines += ["", f"[{number}] {len(ids)} case{'s' if len(ids) != 1 else ''}: {group.title}", f"    {', '.join(ids[:ids_shown])}{more}"]
        case, outcome = group.example
        lines += ["    for example:", *(f"    {line}" for line in example(case, outcome).splitlines())]
    return lines


def skip_lines(results: list[CaseResult]) -> list[str]:
    """Why cases were skipped, each reason once with its count."""
    reasons = skip_reasons([result.outcome for result in results])
    skipped = [(reason, count) for reason, count in reasons if not is_not_claimed(reason)]
    unclaimed = [(reason, count) for reason, count in reasons if is_not_claimed(reason)]
    lines = ["", "skipped", *(f"  {count:>4} x {reason}" for reason, count in skipped)] if skipped else []
    if unclaimed:
        lines += ["", "not claimed (skipped on purpose: neither passed nor failed)"]
        lines += [f"  {count:>4} x {reason}" for reason, count in unclaimed]
    return lines


def groups_of(results: list[CaseResult], clauses: Mapping[str, Clause]) -> list[FailureGroup]:
    """The failure groups of a run."""
    return group_failures(((result.case, result.outcome) for result in results if result.case is not None), clauses)


def _case_json(result: CaseResult, every_divergence: bool, group_key: str) -> dict[str, object]:
    outcome, case = result.outcome, result.case
    entry: dict[str, object] = {
        "id": outcome.case_id,
        "status": outcome.status,
        group_key: result.lab,
        "chapter": result.chapter,
        "fixture": case.location if case is not None else None,
        "clauses": list(case.clauses) if isinstance(case, Case) else [],
        "features": list(getattr(case, "features", ())) if isinstance(case, Case) else [],
        "message": outcome.message,
        "divergence": outcome.divergence.to_json() if outcome.divergence is not None else None,
        "duration_s": round(outcome.duration_s, 6),
    }
    if result.check_the_case is not None:
        entry["check_the_case"] = result.check_the_case
    if every_divergence and isinstance(case, Case) and outcome.observation is not None and outcome.divergence is not None:
        entry["divergences"] = [divergence.to_json() for divergence in all_divergences(case, outcome.observation)]
    return entry


def json_report(
    results: list[CaseResult],
    clauses: Mapping[str, Clause] | None = None,
    every_divergence: bool = False,
    profile: str = DEFAULT_PROFILE,
) -> dict[str, object]:
    """The ``--report-json`` document: summary, failure groups, and every case; it names the profile when not the default.

    A case's group is under the profile's word for it: ``lab`` for the course, ``area`` for pi-ai-1.
    """
    groups = groups_of(results, clauses or {})
    group_key = get_profile(profile).group_label
    return {
        **({"profile": profile} if profile != DEFAULT_PROFILE else {}),
        "summary": summary(results),
        "groups": [
            {
                "clause": group.clause,
                "pattern": group.pattern,
                "kind": group.kind,
                "cause": str(group.cause),
                "count": len(group.members),
                "cases": [case.id for case, _ in group.members],
                "example": group.example[0].id,
            }
            for group in groups
        ],
        "skipped": [{"reason": reason, "count": count} for reason, count in skip_reasons([result.outcome for result in results])],
        "cases": [_case_json(result, every_divergence, group_key) for result in results],
    }


def write_json_report(
    path: Path,
    results: list[CaseResult],
    clauses: Mapping[str, Clause] | None = None,
    every_divergence: bool = False,
    profile: str = DEFAULT_PROFILE,
) -> None:
    """Write the JSON report to ``path`` (atomically: a previous report stays until this one is whole)."""
    from conformance.common.atomic_file import write_text_atomic

    document = json_report(results, clauses, every_divergence, profile)
    write_text_atomic(path, scrub(json.dumps(document, ensure_ascii=False, indent=2)) + "\n")
