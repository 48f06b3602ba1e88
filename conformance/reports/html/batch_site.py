"""The glue between ``grade-batch`` and the class site: keep each result, then write the site.

A batch resumes: submissions graded by an earlier run are not graded again, so their
results must come from disk. With ``--html``, each result is saved as
``OUT/reports/<submission>/result.json`` (the worker's format, :mod:`conformance.grading.result_json`;
the points are recomputed from the outcomes when read back), and the site is built from
every row of the gradebook that has one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from conformance.common.atomic_file import write_text_atomic
from conformance.common.submission_order import sort_key
from conformance.grading.grader import GradingContext, SubmissionResult
from conformance.grading.result_json import ResultFormatError, result_from_json, result_to_json
from conformance.reports.html.class_site import SiteStats, write_class_site

RESULT_FILE = "result.json"


class HtmlBatch:
    """Saves each result of a batch as it finishes; builds the class site at the end."""

    def __init__(self, out: Path, folder: Path, for_students: bool) -> None:
        self.reports = out / "reports"
        self.folder = folder
        self.for_students = for_students
        self.grading_s = 0.0

    def wrap(self, on_result: Callable[[SubmissionResult], None]) -> Callable[[SubmissionResult], None]:
        """``on_result`` that also saves the result for the site."""

        def record(result: SubmissionResult) -> None:
            on_result(result)
            self.grading_s += result.duration_s
            try:
                write_text_atomic(self.reports / result.name / RESULT_FILE, json.dumps(result_to_json(result), ensure_ascii=False))
            except OSError as error:  # a full disk costs this submission its page, not the batch
                print(f"pi-conformance: cannot save the result of {result.name} for the HTML site: {error}", file=sys.stderr)

        return record

    def build(self, context: GradingContext, names: Iterable[str]) -> tuple[SiteStats, list[str]]:
        """Write the site from the saved results of ``names``; also the names without a usable result."""
        results: list[SubmissionResult] = []
        missing: list[str] = []
        for name in sorted(names, key=lambda name: sort_key(Path(name))):
            try:
                data = json.loads((self.reports / name / RESULT_FILE).read_text(encoding="utf-8"))
                results.append(result_from_json(data, context))
            except (OSError, ValueError, ResultFormatError):
                missing.append(name)
        note = ""
        if missing:
            names_missing = ", ".join(missing)
            note = f"{len(missing)} submission(s) graded by an earlier run without --html are not shown: {names_missing} (run with --fresh)"
        return write_class_site(self.folder, results, context.clauses, self.for_students, note), missing
