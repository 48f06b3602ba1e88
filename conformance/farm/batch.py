"""Grade a folder of submissions, up to ``jobs`` at once, each in a supervised worker process.

The batch process never runs student code: each submission is graded by a worker process
of its own (:mod:`conformance.farm.job`), forked from one warm fork server
(:mod:`conformance.farm.spawner`), which a submission may hang, crash or
kill without taking the batch down; it then gets a ``crashed`` or ``timed-out`` row. The
batch's threads only wait on those workers. As each submission finishes, its reports are
written and ``on_result`` is called (the gradebook journal appends its row), so an
interrupted batch keeps everything it finished.
"""

from __future__ import annotations

import queue
import re
import shlex
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from conformance.adapters.kinds import default_template, parse_impl
from conformance.common.atomic_file import write_text_atomic
from conformance.common.student_text import path_text
from conformance.common.submission_order import sort_key
from conformance.farm.job import Supervised, grade_supervised, worker_env
from conformance.farm.progress import Progress
from conformance.farm.reaper import Reaper
from conformance.farm.report_files import write_all
from conformance.farm.spawner import WorkerSpawner
from conformance.grading.grader import GradeOptions, GradingContext, SubmissionResult
from conformance.model.profiles import DEFAULT_PROFILE


@dataclass(frozen=True)
class BatchOptions:
    """How to grade a batch."""

    grade: GradeOptions = field(default_factory=GradeOptions)
    jobs: int = 1
    #: The ``--impl`` of a submission: ``{path}`` is its folder, ``{name}`` its name.
    impl_template: str = field(default_factory=lambda: default_template(DEFAULT_PROFILE))
    #: Where each submission's report folder goes (none when None).
    reports_dir: Path | None = None
    #: The workers' scratch folder (result files, logs); a temporary one when None.
    work_dir: Path | None = None
    #: Adopt and kill what dead workers leave running (Linux; the CLI sets it). Off by
    #: default: it kills every child of the calling process that is not a worker.
    reap_orphans: bool = False
    #: ``--run-as-range``: each submission graded at once runs as one of these uids, never two at once.
    run_as_uids: tuple[int, ...] = ()


def discover_submissions(directory: Path) -> list[Path]:
    """The direct subfolders of ``directory`` (hidden ones excepted), sorted by name."""
    return sorted((path for path in directory.iterdir() if path.is_dir() and not path.name.startswith(".")), key=sort_key)


def submission_name(submission: Path) -> str:
    """The name a submission goes by in its row, its reports folder and progress: its folder's, undecodable bytes as ``\\xff``."""
    return path_text(submission.name)


def name_clash(names: list[str]) -> str | None:
    """Two folders that go by one name (``caf\\xe9`` as bytes and as text) would share a row: say which, before grading."""
    seen = sorted({name for name in names if names.count(name) > 1})
    if not seen:
        return None
    return f"two submission folders go by the same name once undecodable bytes are escaped: {', '.join(seen)}; rename one of each"


def impl_for(template: str, submission: Path) -> str:
    """The ``--impl`` value for one submission.

    For templates of a kind whose target is split like a shell command line (``cmd:``), ``{path}`` and
    ``{name}`` are shell-quoted, so ``o'brien`` or ``a b`` stay one argument.
    """
    path, name = str(submission.resolve()), submission.name
    if parse_impl(template).kind.shell_target:
        path, name = shlex.quote(path), shlex.quote(name)
    values = {"path": path, "name": name}
    # One pass, so a name that itself contains "{path}" is not substituted again.
    return re.sub(r"\{(path|name)\}", lambda match: values[match[1]], template)


def _reaper(enabled: bool) -> Reaper:
    """The batch's reaper of orphaned processes, enabled when the batch reaps them."""
    reaper = Reaper()
    if enabled:
        reaper.enable()
    return reaper


def grade_batch(
    submissions: Sequence[Path],
    context: GradingContext,
    options: BatchOptions,
    stream: TextIO | None = None,
    tty: bool | None = None,
    on_result: Callable[[SubmissionResult], None] | None = None,
) -> list[SubmissionResult]:
    """Grade every submission (writing its reports as it finishes); the results sorted by name.

    On KeyboardInterrupt the running workers are killed, the submissions they held get no
    result (a resumed batch grades them again), and the interrupt propagates.
    """
    progress = Progress(len(submissions), stream, tty)
    stop = threading.Event()
    lock = threading.Lock()
    scratch = tempfile.TemporaryDirectory(prefix="pi-grade-") if options.work_dir is None else None
    work_dir = options.work_dir or Path(scratch.name if scratch else ".")
    reaper = _reaper(options.reap_orphans)
    # Its fork server starts with the first worker, from a grading thread, and dies with that
    # thread (PR_SET_PDEATHSIG): the executor's threads live until the batch is over.
    spawner = WorkerSpawner(worker_env(), reaper)
    users = _Users(options.grade, options.run_as_uids)

    def grade_one(submission: Path) -> SubmissionResult | None:
        if stop.is_set():
            return None
        name = submission_name(submission)
        progress.started(name)
        impl = parse_impl(impl_for(options.impl_template, submission))  # the submission's --impl is made here: parsed once
        with users.lease() as grade_options:
            supervised = grade_supervised(impl, name, context, grade_options, work_dir, stop, reaper=reaper, spawner=spawner)
        if supervised is None:
            return None
        result = supervised.result
        if options.reports_dir is not None:
            _write_reports(options.reports_dir / name, supervised, context, stream)
        progress.finished(result)
        if on_result is not None:
            with lock:
                on_result(result)
        return result

    executor = ThreadPoolExecutor(max_workers=max(1, options.jobs), thread_name_prefix="grade")
    try:
        results = [result for result in executor.map(grade_one, submissions) if result is not None]
    except KeyboardInterrupt:
        stop.set()  # each waiting thread kills its worker's group and returns
        executor.shutdown(wait=True, cancel_futures=True)
        progress.close()
        raise
    finally:
        spawner.close()
        reaper.disable()
        if scratch is not None:
            scratch.cleanup()
    executor.shutdown(wait=True)
    progress.close()
    return sorted(results, key=lambda result: sort_key(Path(result.name)))


def _write_reports(folder: Path, supervised: Supervised, context: GradingContext, stream: TextIO | None) -> None:
    try:
        write_all(folder, supervised.result, context.clauses)
        if supervised.log:  # the worker's own output, for staff when it died or overran
            write_text_atomic(folder / "worker.log", supervised.log)
    except Exception as error:  # a full disk or a renderer bug costs this submission's reports, not the batch
        print(f"pi-conformance: cannot write the reports of {supervised.result.name}: {type(error).__name__}: {error}", file=stream)


class _Users:
    """The uids of ``--run-as-range``, one lent to each submission being graded (the grade options as they are without)."""

    def __init__(self, options: GradeOptions, uids: tuple[int, ...]) -> None:
        self.options = options
        self.free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for uid in uids:
            self.free.put(uid)
        self.lending = bool(uids)

    @contextmanager
    def lease(self) -> Iterator[GradeOptions]:
        """The grade options with a uid no other submission runs as meanwhile."""
        if not self.lending:
            yield self.options
            return
        uid = self.free.get()  # never waits: the range holds a uid per job at least
        try:
            yield replace(self.options, settings=replace(self.options.settings, run_as=(uid, uid)))
        finally:
            self.free.put(uid)
