"""The gradebook: one CSV row per submission, its shard metadata, and the merge of shards.

Columns: ``submission, status, total, max_total``, one ``lab_<lab>`` column per graded
lab (``area_<area>`` per area for profile ``pi-ai-1``), ``cases_passed, cases_total,
duration_s, sandbox, limits, detail`` (``sandbox``: the isolation the submission ran under:
``bwrap``, ``none`` or ``in-process``; ``limits``: which resource limits held, and by what).
Points have two decimals.

Beside ``gradebook.csv``, ``gradebook.meta.json`` says which shard ``K/N`` the gradebook
holds, which submissions that shard has, the profile they were graded against, and whether
the batch finished: the CSV keeps the plain columns spreadsheets and LMS imports expect,
and the merge can still refuse a missing, repeated or unfinished shard.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from conformance.common.atomic_file import write_text_atomic
from conformance.common.student_text import csv_cell, csv_cell_value
from conformance.grading.grader import SubmissionResult
from conformance.grading.rubric import Rubric
from conformance.model.profiles import DEFAULT_PROFILE


class GradebookError(ValueError):
    """Gradebooks that cannot be merged: unreadable, different columns, or overlapping."""


def columns(rubric: Rubric) -> list[str]:
    """The gradebook's header for a rubric."""
    return [
        "submission",
        "status",
        "total",
        "max_total",
        *(f"{rubric.group_label}_{lab}" for lab in rubric.labs),
        "cases_passed",
        "cases_total",
        "duration_s",
        "sandbox",
        "limits",
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
        "sandbox": result.isolation,
        "limits": result.limits,
        "detail": result.detail,
    }
    for lab in result.score.labs:
        values[f"{result.rubric.group_label}_{lab.lab}"] = f"{lab.points:.2f}"
    return values


def write_gradebook(path: Path, results: Sequence[SubmissionResult], rubric: Rubric) -> None:
    """Write the gradebook, sorted by submission name."""
    write_rows(path, columns(rubric), [row(result) for result in results])


def csv_text(header: Sequence[str], rows: Iterable[Mapping[str, str]], with_header: bool = True) -> str:
    """Rows as CSV text (``\r\n`` line ends, as the csv module writes them).

    Each cell goes through :func:`csv_cell`: a folder named ``=HYPERLINK(...)`` is text to a
    spreadsheet, not a formula; :func:`read_gradebook` gives the names back as they were.
    """
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(header))
    if with_header:
        writer.writeheader()
    for entry in rows:
        writer.writerow({key: csv_cell(value) for key, value in entry.items()})
    return buffer.getvalue()


def write_rows(path: Path, header: Sequence[str], rows: Iterable[Mapping[str, str]]) -> None:
    """Replace the gradebook at ``path`` atomically with ``rows``, sorted by submission name."""
    write_text_atomic(path, csv_text(header, sorted(rows, key=lambda entry: entry["submission"])))


def meta_path(gradebook: Path) -> Path:
    """The metadata file beside a gradebook: ``gradebook.csv`` -> ``gradebook.meta.json``."""
    return gradebook.with_name(gradebook.stem + ".meta.json")


@dataclass(frozen=True)
class GradebookMeta:
    """What a gradebook holds: shard ``index`` of ``count``, its submissions, finished or not, the profile."""

    index: int
    count: int
    columns: list[str]
    submissions: list[str]
    complete: bool = False
    profile: str = DEFAULT_PROFILE

    def write(self, gradebook: Path) -> None:
        """Write the metadata beside ``gradebook`` (atomically)."""
        data = {"format": 1, "shard": f"{self.index}/{self.count}", **asdict(self)}
        write_text_atomic(meta_path(gradebook), json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def read_meta(gradebook: Path) -> GradebookMeta | None:
    """The metadata beside ``gradebook``; None when there is none; :class:`GradebookError` if unreadable."""
    path = meta_path(gradebook)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = GradebookMeta(
            index=int(data["index"]),
            count=int(data["count"]),
            columns=[str(item) for item in data["columns"]],
            submissions=[str(item) for item in data["submissions"]],
            complete=bool(data["complete"]),
            profile=str(data.get("profile", DEFAULT_PROFILE)),  # older gradebooks: the course
        )
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise GradebookError(f"cannot read {path}: {error}") from error
    if not 1 <= meta.index <= meta.count:
        raise GradebookError(f"{path}: shard {meta.index}/{meta.count} is not a shard")
    return meta


def read_gradebook(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of a gradebook."""
    try:
        with path.open(encoding="utf-8", newline="") as file:
            reader = csv.DictReader(file)
            rows = [{key: csv_cell_value(value) if isinstance(value, str) else value for key, value in entry.items()} for entry in reader]
            header = list(reader.fieldnames or [])
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise GradebookError(f"cannot read {path}: {error}") from error
    if "submission" not in header:
        raise GradebookError(f"{path}: not a gradebook (no submission column)")
    return header, rows


def check_shards(paths: Sequence[Path]) -> None:
    """Refuse unless ``paths`` are every shard ``1..N`` of one split, once each, each finished."""
    metas: list[tuple[Path, GradebookMeta]] = []  # a list: one file given twice is two shards
    for path in paths:
        meta = read_meta(path)
        if meta is None:
            raise GradebookError(
                f"{path}: no {meta_path(path).name} beside it, so which shard it holds is unknown "
                "(grade-batch writes one; merge the gradebooks that came with theirs)"
            )
        metas.append((path, meta))
    profiles = {meta.profile for _, meta in metas}
    if len(profiles) > 1:
        listed = ", ".join(f"{path} is profile {meta.profile}" for path, meta in metas)
        raise GradebookError(f"the gradebooks were graded against different profiles: {listed}")
    counts = {meta.count for _, meta in metas}
    if len(counts) > 1:
        listed = ", ".join(f"{path} is {meta.index}/{meta.count}" for path, meta in metas)
        raise GradebookError(f"the gradebooks come from different splits: {listed}")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for path, meta in metas:
        if meta.index in seen:
            raise GradebookError(
                f"shard {meta.index}/{count} is given twice ({seen[meta.index]} and {path}): its submissions would be graded more than once"
            )
        seen[meta.index] = path
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in seen]
    if missing:
        raise GradebookError(f"missing shard(s) {', '.join(missing)}: a merge needs all {count} shards, each once")
    for path, meta in metas:
        if not meta.complete:
            raise GradebookError(f"{path}: shard {meta.index}/{count} did not finish (run its grade-batch command again to resume it)")


def merge_gradebooks(paths: Sequence[Path], output: Path) -> int:
    """Join shard gradebooks into ``output``; the number of submissions.

    Refuses anything but all ``N`` shards of one split, each once and finished
    (:func:`check_shards`), gradebooks with different columns (graded with different
    rubrics) and any submission that appears twice, within one file or across files.
    """
    check_shards(paths)
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
    write_rows(output, header, merged.values())
    return len(merged)
