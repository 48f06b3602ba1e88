"""The gradebook of a running batch: one row appended as each submission finishes, resumable.

``OUT/gradebook.csv`` grows by one flushed, fsynced row per finished submission, so a batch
that is interrupted (Ctrl-C, a killed job, a lost machine) keeps every row it wrote. Run
again on the same ``OUT``, it grades only the submissions without a row; ``--fresh``
starts over. At the end the gradebook is rewritten sorted, atomically, and its
``gradebook.meta.json`` marked complete. Only the batch process writes here: workers hand
their results to it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import get_args

from conformance.common.student_text import path_text
from conformance.farm.gradebook import GradebookError, GradebookMeta, csv_text, read_gradebook, read_meta, row, write_rows
from conformance.grading.grader import SubmissionResult
from conformance.grading.status import SubmissionStatus
from conformance.model.profiles import DEFAULT_PROFILE

GRADEBOOK = "gradebook.csv"


class JournalError(ValueError):
    """An existing gradebook that this batch cannot resume (another rubric or shard, no metadata)."""


class Journal:
    """The rows written so far and the file they are appended to."""

    def __init__(self, path: Path, header: list[str], meta: GradebookMeta, rows: dict[str, dict[str, str]]) -> None:
        self.path = path
        self.header = header
        self.meta = meta
        self.rows = rows

    @classmethod
    def open(
        cls, out: Path, header: list[str], shard: tuple[int, int], names: Sequence[str], fresh: bool = False, profile: str = DEFAULT_PROFILE
    ) -> Journal:
        """Start or resume the gradebook in ``out`` for the submissions ``names`` of ``shard``.

        Rows of an earlier run with the same columns and shard are kept (a half-written last
        line is dropped, so that submission is graded again); rows of submissions that are
        no longer there are dropped.
        """
        path = out / GRADEBOOK
        kept: dict[str, dict[str, str]] = {}
        if not fresh and path.exists():
            kept = _resumable_rows(path, header, shard, set(names), profile)
        meta = GradebookMeta(shard[0], shard[1], list(header), list(names), complete=False, profile=profile)
        meta.write(path)
        write_rows(path, header, kept.values())
        return cls(path, list(header), meta, kept)

    def pending(self, submissions: Sequence[Path]) -> list[Path]:
        """The submissions that have no row yet."""
        return [submission for submission in submissions if path_text(submission.name) not in self.rows]

    def record(self, result: SubmissionResult) -> None:
        """Append the result's row and make it durable before returning."""
        entry = row(result)
        with self.path.open("a", encoding="utf-8", newline="") as file:
            file.write(csv_text(self.header, [entry], with_header=False))
            file.flush()
            os.fsync(file.fileno())
        self.rows[result.name] = entry

    def finish(self) -> None:
        """Rewrite the gradebook sorted and mark it complete when every submission has a row."""
        write_rows(self.path, self.header, self.rows.values())
        complete = all(name in self.rows for name in self.meta.submissions)
        GradebookMeta(self.meta.index, self.meta.count, self.header, self.meta.submissions, complete, self.meta.profile).write(self.path)


def _resumable_rows(
    path: Path, header: list[str], shard: tuple[int, int], names: set[str], profile: str = DEFAULT_PROFILE
) -> dict[str, dict[str, str]]:
    fresh_hint = "pass --fresh to grade every submission again (replacing it), or choose another --out"
    try:
        meta = read_meta(path)
        found_header, rows = read_gradebook(path)
    except GradebookError as error:
        raise JournalError(f"{error}; {fresh_hint}") from error
    if meta is None:
        raise JournalError(f"{path} exists but has no {path.stem}.meta.json, so it cannot be resumed; {fresh_hint}")
    if meta.profile != profile:
        raise JournalError(f"{path} was graded against profile {meta.profile}, not {profile}; {fresh_hint}")
    if found_header != header or meta.columns != header:
        raise JournalError(f"{path} has other columns (graded with another rubric?); {fresh_hint}")
    if (meta.index, meta.count) != shard:
        raise JournalError(f"{path} holds shard {meta.index}/{meta.count}, not {shard[0]}/{shard[1]}; {fresh_hint}")
    statuses = get_args(SubmissionStatus)
    kept: dict[str, dict[str, str]] = {}
    for entry in rows:
        whole = None not in entry and all(value is not None for value in entry.values()) and entry.get("status") in statuses
        if whole and entry["submission"] in names:
            kept[entry["submission"]] = entry
    return kept
