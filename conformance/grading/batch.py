"""Grade a folder of submissions in parallel, one fresh adapter process each.

Threads, not processes: each submission's implementation already runs in its own process
(Node.js for ``pi-course:``), and the grader's share of the work (matching, validating
observations) is a small part of the time, most of it spent waiting on those processes.
A submission that fails to build, hangs or crashes only gets its own row saying so.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from conformance.grading.grader import GradeOptions, GradingContext, SubmissionResult, grade_submission
from conformance.grading.progress import Progress
from conformance.grading.reports import write_all
from conformance.grading.scoring import score
from conformance.grading.shard import sort_key


@dataclass(frozen=True)
class BatchOptions:
    """How to grade a batch."""

    grade: GradeOptions = field(default_factory=GradeOptions)
    jobs: int = 1
    #: The ``--impl`` of a submission: ``{path}`` is its folder, ``{name}`` its name.
    impl_template: str = "pi-course:{path}"
    #: Where each submission's report folder goes (none when None).
    reports_dir: Path | None = None


def discover_submissions(directory: Path) -> list[Path]:
    """The direct subfolders of ``directory`` (hidden ones excepted), sorted by name."""
    return sorted((path for path in directory.iterdir() if path.is_dir() and not path.name.startswith(".")), key=sort_key)


def impl_for(template: str, submission: Path) -> str:
    """The ``--impl`` value for one submission."""
    path = str(submission.resolve())
    # cmd: lines are split like a shell would: quote the path so spaces stay inside it.
    if template.startswith("cmd:"):
        path = shlex.quote(path)
    return template.replace("{path}", path).replace("{name}", submission.name)


def grade_batch(
    submissions: Sequence[Path],
    context: GradingContext,
    options: BatchOptions,
    stream: TextIO | None = None,
    tty: bool | None = None,
) -> list[SubmissionResult]:
    """Grade every submission (and write its reports); the results sorted by name."""
    progress = Progress(len(submissions), stream, tty)
    stop = threading.Event()

    def grade_one(submission: Path) -> SubmissionResult:
        progress.started(submission.name)
        impl = impl_for(options.impl_template, submission)
        try:
            result = grade_submission(impl, context, options.grade, name=submission.name, stop=stop)
        except Exception as error:  # a grader bug must cost one row, not the batch
            result = _grader_failure(submission.name, impl, context, f"{type(error).__name__}: {error}")
        if options.reports_dir is not None:
            try:
                write_all(options.reports_dir / submission.name, result, context.clauses)
            except OSError as error:
                print(f"pi-conformance: cannot write the reports of {submission.name}: {error}", file=stream)
        progress.finished(result)
        return result

    executor = ThreadPoolExecutor(max_workers=max(1, options.jobs), thread_name_prefix="grade")
    try:
        results = list(executor.map(grade_one, submissions))
    except KeyboardInterrupt:
        # Running submissions stop after their current case; waiting ones never start.
        stop.set()
        executor.shutdown(wait=True, cancel_futures=True)
        progress.close()
        raise
    executor.shutdown(wait=True)
    progress.close()
    return sorted(results, key=lambda result: sort_key(Path(result.name)))


def _grader_failure(name: str, impl: str, context: GradingContext, detail: str) -> SubmissionResult:
    from conformance.execution import Outcome

    outcomes = [Outcome(case.id, "errored", f"not run: the grader failed: {detail}", 0.0) for case in context.cases]
    graded = score(context.rubric, zip(context.cases, outcomes, strict=True))
    return SubmissionResult(name, impl, name, "crashed", f"the grader failed: {detail}", graded, context.rubric, 0.0)
