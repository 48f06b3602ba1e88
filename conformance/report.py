"""Summaries and the JSON report of a run."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from conformance.execution import Outcome
from conformance.profiles import DEFAULT_PROFILE, get_profile

STATUSES = ("passed", "failed", "errored", "skipped")


@dataclass(frozen=True)
class CaseResult:
    """One case's outcome with the metadata reports group by."""

    outcome: Outcome
    lab: str
    chapter: str


def summary(results: Iterable[CaseResult]) -> dict[str, int]:
    """Counts per status, plus the total."""
    counts: Counter[str] = Counter(result.outcome.status for result in results)
    return {"total": sum(counts.values()), **{status: counts.get(status, 0) for status in STATUSES}}


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
        lines.append(f"  {label} {lab:<{width}} {counts['passed']:>4}/{counts['total']:<4} passed" + (f"  ({extra})" if extra else ""))
    total = summary(results)
    lines.append("  total    " + ", ".join(f"{total[key]} {key}" for key in ("total", *STATUSES)))
    return lines


def json_report(results: list[CaseResult], profile: str = DEFAULT_PROFILE) -> dict[str, object]:
    """The ``--report-json`` document; it names the profile when it is not the default one."""
    return {
        **({"profile": profile} if profile != DEFAULT_PROFILE else {}),
        "summary": summary(results),
        "cases": [
            {
                "id": result.outcome.case_id,
                "status": result.outcome.status,
                "message": result.outcome.message,
                "duration_s": round(result.outcome.duration_s, 6),
            }
            for result in results
        ],
    }


def write_json_report(path: Path, results: list[CaseResult], profile: str = DEFAULT_PROFILE) -> None:
    """Write the JSON report to ``path``."""
    path.write_text(json.dumps(json_report(results, profile), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
