"""Write a submission's reports to files: one format each, or every format into a folder.

Each file is written atomically (temporary file, then rename): a report is never half
written, and the previous one stays until its replacement is whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from conformance.common.atomic_file import write_text_atomic
from conformance.gradescope import results as gradescope
from conformance.grading.grader import SubmissionResult
from conformance.model.clauses import Clause
from conformance.reports.formats import json_report, junit, markdown

#: Format name -> (renderer, default file name in a batch's per-submission folder).
WRITERS = {
    "markdown": (markdown.render, "report.md"),
    "junit": (junit.render, "junit.xml"),
    "gradescope": (gradescope.render, "results.json"),
    "json": (json_report.render, "report.json"),
}


def write_report(format_name: str, path: Path, result: SubmissionResult, clauses: Mapping[str, Clause]) -> None:
    """Write one report format to ``path`` (its folder is created)."""
    render, _ = WRITERS[format_name]
    write_text_atomic(path, render(result, clauses))


def write_all(folder: Path, result: SubmissionResult, clauses: Mapping[str, Clause]) -> list[Path]:
    """Write every format into ``folder`` under its default name; the paths written."""
    written = []
    for format_name, (_, file_name) in WRITERS.items():
        write_report(format_name, folder / file_name, result, clauses)
        written.append(folder / file_name)
    if result.build_report:
        write_text_atomic(folder / "build.log", result.build_report + "\n")
        written.append(folder / "build.log")
    return written
