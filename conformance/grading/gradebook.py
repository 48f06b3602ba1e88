"""The gradebook: one CSV row per submission, and the merge of shard gradebooks.

Columns: ``submission, status, total, max_total``, one ``lab_<lab>`` column per graded
lab, ``cases_passed, cases_total, duration_s, detail``. Points have two decimals.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from conformance.grading.grader import SubmissionResult
from conformance.grading.rubric import Rubric


class GradebookError(ValueError):
    """Gradebooks that cannot be merged: unreadable, different columns, or overlapping."""


def columns(rubric: Rubric) -> list[str]:
    """The gradebook's header for a rubric."""
    return [
        "submission",
        "status",
        "total",
        "max_total",
        *(f"lab_{lab}" for lab in rubric.labs),
        "cases_passed",
        "cases_total",
        "duration_s",
        "detail",
    ]


def row(result: SubmissionResult) -> dict[str, str]:
    """One submission's row."""
    values = {
        "submission": result.name,
        "status": result.status,
        "total": f"{result.score.points:.2f}",
        "max_total": f"{result.score.max_points:.2f}",
        "cases_passed": str(result.score.passed),
        "cases_total": str(result.score.total),
        "duration_s": f"{result.duration_s:.1f}",
        "detail": result.detail,
    }
    for lab in result.score.labs:
        values[f"lab_{lab.lab}"] = f"{lab.points:.2f}"
    return values


def write_gradebook(path: Path, results: Sequence[SubmissionResult], rubric: Rubric) -> None:
    """Write the gradebook, sorted by submission name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=columns(rubric))
        writer.writeheader()
        for result in sorted(results, key=lambda result: result.name):
            writer.writerow(row(result))


def read_gradebook(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of a gradebook."""
    try:
        with path.open(encoding="utf-8", newline="") as file:
            reader = csv.DictReader(file)
            rows = list(reader)
            header = list(reader.fieldnames or [])
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise GradebookError(f"cannot read {path}: {error}") from error
    if "submission" not in header:
        raise GradebookError(f"{path}: not a gradebook (no submission column)")
    return header, rows


def merge_gradebooks(paths: Sequence[Path], output: Path) -> int:
    """Join shard gradebooks into ``output``; the number of submissions.

    Refuses gradebooks with different columns (graded with different rubrics) and any
    submission that appears twice, within one file or across files: a shard graded twice
    or two overlapping shard settings would otherwise go unnoticed.
    """
    header: list[str] | None = None
    merged: dict[str, dict[str, str]] = {}
    origin: dict[str, str] = {}
    duplicates: list[str] = []
    for path in paths:
        this_header, rows = read_gradebook(path)
        if header is None:
            header = this_header
        elif this_header != header:
            raise GradebookError(f"{path}: its columns differ from {paths[0]} (graded with another rubric?):\n  {this_header}\n  {header}")
        for entry in rows:
            name = entry["submission"]
            if name in merged:
                duplicates.append(f"{name} (in {origin[name]} and {path})")
                continue
            merged[name] = entry
            origin[name] = str(path)
    if duplicates:
        raise GradebookError("submissions graded more than once (overlapping shards?):\n  " + "\n  ".join(duplicates))
    assert header is not None
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=header)
        writer.writeheader()
        for name in sorted(merged):
            writer.writerow(merged[name])
    return len(merged)
