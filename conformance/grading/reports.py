"""Write a submission's reports to files: one format each, or every format into a folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from conformance.clauses import Clause
from conformance.grading.formats import gradescope, json_report, junit, markdown
from conformance.grading.grader import SubmissionResult

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
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(result, clauses), encoding="utf-8")


def write_all(folder: Path, result: SubmissionResult, clauses: Mapping[str, Clause]) -> list[Path]:
    """Write every format into ``folder`` under its default name; the paths written."""
    written = []
    for format_name, (_, file_name) in WRITERS.items():
        write_report(format_name, folder / file_name, result, clauses)
        written.append(folder / file_name)
    if result.build_report:
        (folder / "build.log").write_text(result.build_report + "\n", encoding="utf-8")
        written.append(folder / "build.log")
    return written
