"""Run one submission's grading in a worker process and always come back with a result.

The worker (:mod:`conformance.farm.worker`, forked by :mod:`conformance.farm.spawner`'s
fork server) runs in a new session, so it and everything it starts form a process group
the supervisor can kill at once. The supervisor waits for
it under a hard wall-clock limit (the ``--budget`` plus room for the build and start-up),
then kills the group whatever happened, so nothing the submission left behind in it keeps
running. If the worker died (a submission can SIGKILL its parent) or broke, the outcomes it
recorded are kept and a new worker grades the cases left; the submission is ``crashed``,
saying so. A worker that overran makes it ``timed-out``. Either way the batch goes on.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from conformance.adapters.course_build import BUILD_TIMEOUT_S
from conformance.adapters.kinds import Impl, ImplSpecError, parse_impl
from conformance.adapters.settings import ImplSettings
from conformance.farm.reaper import Reaper
from conformance.farm.spawner import Worker, WorkerSpawner, WorkerStartError
from conformance.farm.worker import EXIT_GRADER_FAILED, Job
from conformance.grading.chapter_scope import scope_of, scoped
from conformance.grading.grader import GradeOptions, GradingContext, SubmissionResult
from conformance.grading.result_json import ResultFormatError, result_from_json
from conformance.grading.scoring import score
from conformance.grading.status import NOT_RUN, SubmissionStatus
from conformance.isolation.budget import remove_orphan_groups
from conformance.isolation.build_disk import unmount_below
from conformance.isolation.sandbox import choose_isolation
from conformance.judging.outcome import Outcome
from conformance.model.cases import DEFAULT_TIMEOUT_S, Case

#: Room beyond the budget for the worker's start-up, the case in flight and the cleanup.
MARGIN_S = 30.0
#: Used when no ``--budget`` is set: grading never waits forever.
DEFAULT_BUDGET_S = 600.0
_POLL_S = 0.2
#: Workers one submission may use: after a worker dies, a new one grades the cases left.
MAX_WORKERS = 3
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class Supervised:
    """A worker's outcome: the result, and the worker's log when something went wrong."""

    result: SubmissionResult
    log: str | None = None


def hard_limit_s(options: GradeOptions, cases: Sequence[Case] = ()) -> float:
    """How long a worker may run before it is killed: budget, build time, the case in flight (the longest timeout, twice) and a margin."""
    build = BUILD_TIMEOUT_S if options.build else 0.0
    per_case = 2 * max((case.timeout_with(options.case_timeout_s) for case in cases), default=options.case_timeout_s or DEFAULT_TIMEOUT_S)
    return (options.budget_s or DEFAULT_BUDGET_S) + build + per_case + MARGIN_S


def grade_supervised(
    impl: Impl,
    name: str,
    context: GradingContext,
    options: GradeOptions,
    work_dir: Path,
    stop: threading.Event | None = None,
    limit_s: float | None = None,
    reaper: Reaper | None = None,
    spawner: WorkerSpawner | None = None,
) -> Supervised | None:
    """Grade ``impl`` in a worker process; None when ``stop`` was set before it finished.

    ``work_dir`` holds the worker's result, progress and log files (the grader's own folder,
    never shown to the submission); they are removed once read. ``reaper``, when given,
    learns of the worker and sweeps what it leaves behind once it is gone.

    When a worker dies, the outcomes it recorded are kept, the case in flight is charged
    with the death, and a new worker grades the cases left (up to :data:`MAX_WORKERS` in
    all, within the one hard limit): a submission that kills its grader loses that case,
    not every case after it.
    """
    reaper = reaper or Reaper()
    if spawner is None:  # a batch shares one; alone, this call has its own
        own = WorkerSpawner(worker_env(), reaper)
        try:
            return grade_supervised(impl, name, context, options, work_dir, stop, limit_s, reaper, own)
        finally:
            own.close()
    context = scoped(context, scope_of(impl))[0]  # the cases its workers will grade (the chapter it is at)
    limit_s = limit_s if limit_s is not None else hard_limit_s(options, context.cases)
    work_dir = work_dir.absolute()  # the worker may not share our idea of "here"
    work_dir.mkdir(parents=True, exist_ok=True)
    # A row the grader had to give up on still names the isolation the submission ran under.
    run = _Supervision(impl.spec, name, context, limit_s, impl.planned_isolation(options.settings))
    for _ in range(MAX_WORKERS):
        worker = _run_worker(impl, name, context, options, work_dir, stop, run.left_s, reaper, spawner, run.known)
        if worker is None:
            return None
        code, result_text, progress, log_text = worker
        run.known.update(progress)
        if log_text:
            run.logs.append(log_text)
        if code is None:
            return run.timed_out()
        if code == 0:
            return run.finished(result_text)
        if not run.charge_death(code, log_text):
            break
    return Supervised(run.failed("crashed", "; ".join(run.deaths)), run.log)


@dataclass
class _Supervision:
    """One submission under supervision: its hard limit, and what its workers have left so far."""

    impl: str
    name: str
    context: GradingContext
    limit_s: float
    isolation: str
    started: float = field(default_factory=time.perf_counter)
    #: The outcomes the workers recorded (and the deaths charged to cases), by case id.
    known: dict[str, Outcome] = field(default_factory=dict)
    deaths: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    deadline: float = field(init=False)

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.limit_s

    @property
    def left_s(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    @property
    def log(self) -> str | None:
        """The workers' logs, for a result that went wrong."""
        return "\n".join(self.logs) or None

    def failed(self, status: SubmissionStatus, detail: str, timed_out: bool = False) -> SubmissionResult:
        elapsed = time.perf_counter() - self.started
        return failed_result(self.name, self.impl, self.context, status, detail, elapsed, timed_out, self.known, self.isolation)

    def timed_out(self) -> Supervised:
        """The worker overran the hard limit and was killed."""
        detail = f"stopped after {self.limit_s:g} s, the hard limit of one submission (its --budget plus room for the build)"
        return Supervised(self.failed("timed-out", detail, timed_out=True), self.log)

    def finished(self, result_text: str | None) -> Supervised:
        """The worker exited normally: its result, ``crashed`` when an earlier worker died."""
        try:
            if result_text is None:
                raise ResultFormatError("its result file is missing or empty")
            result = result_from_json(json.loads(result_text), self.context)
        except (ValueError, ResultFormatError) as error:
            return Supervised(self.failed("crashed", f"the grading worker left no usable result ({error})"), self.log)
        if self.deaths:
            detail = f"{'; '.join(self.deaths)}; the other cases were graded in a new worker"
            return Supervised(replace(result, status="crashed", detail=detail, duration_s=time.perf_counter() - self.started), self.log)
        return Supervised(result)

    def charge_death(self, code: int, log_text: str | None) -> bool:
        """Charge the worker's death to the case in flight; whether a new worker may grade the cases left."""
        death = _death(code, log_text)
        in_flight = next((case for case in self.context.cases if case.id not in self.known), None)
        if in_flight is None or time.monotonic() >= self.deadline:
            self.deaths.append(death)
            return False
        self.deaths.append(f"{death}, during case {in_flight.id}")
        self.known[in_flight.id] = Outcome(in_flight.id, "errored", f"the grading worker died while this case ran: {death}", 0.0)
        return len(self.known) < len(self.context.cases)


def _run_worker(
    impl: Impl,
    name: str,
    context: GradingContext,
    options: GradeOptions,
    work_dir: Path,
    stop: threading.Event | None,
    limit_s: float,
    reaper: Reaper,
    spawner: WorkerSpawner,
    known: dict[str, Outcome],
) -> tuple[int | None, str | None, dict[str, Outcome], str | None] | None:
    """One worker's run: its exit status (None: overran), its result file's text, the outcomes it recorded, its log.

    None when ``stop`` was set before it finished.
    """
    token = f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
    result_path = work_dir / f"{token}.json"
    progress_path = work_dir / f"{token}.progress"
    log_path = work_dir / f"{token}.log"
    # The worker's builds go in a folder of their own, removed below whatever happened to the
    # worker: a killed worker cannot remove its build's workspace itself. Outside work_dir and
    # traversable by others, for a --run-as user.
    builds = Path(tempfile.mkdtemp(prefix="pi-builds-"))
    builds.chmod(0o711)
    options = replace(options, settings=private_home(replace(options.settings, build_root=builds), builds))
    job = Job(impl, name, context, options, result_path, progress_path, tuple(known.values()))
    # In a session of its own (forked by the spawner's server): one killpg reaches all it started.
    try:
        worker = spawner.start(job, log_path)
    except WorkerStartError as error:
        shutil.rmtree(builds, ignore_errors=True)
        return EXIT_GRADER_FAILED, None, {}, str(error)
    try:
        code = _wait(worker, limit_s, stop)
    finally:
        _kill_group(worker)
        reaper.sweep()
        # A supervisor killed with the worker's process group could not remove its cgroups.
        remove_orphan_groups()
        unmount_below(builds)  # the capped disks of builds whose worker was killed
        shutil.rmtree(builds, ignore_errors=True)
    try:
        if code is None and stop is not None and stop.is_set():
            return None
        result_text = _read(result_path) if code == 0 else None
        return code, result_text, _progress(progress_path, context), _read(log_path)
    finally:
        result_path.unlink(missing_ok=True)
        progress_path.unlink(missing_ok=True)
        log_path.unlink(missing_ok=True)


def private_home(settings: ImplSettings, builds: Path) -> ImplSettings:
    """Without a sandbox, a ``--run-as`` user's programs get a home and temporary folder of their own (0700, its).

    The shared ``/tmp`` would let it leave files for, or find those of, a classmate graded after it.
    """
    if settings.run_as is None or choose_isolation(settings.sandbox) != "none":
        return settings  # the sandbox's /tmp is private already
    home = builds / "home"
    home.mkdir(mode=0o700)
    os.chown(home, *settings.run_as)
    return replace(settings, env={"HOME": str(home), "TMPDIR": str(home), **settings.env})


def worker_env() -> dict[str, str]:
    """The workers' environment: the batch's, with this package importable."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(_PACKAGE_ROOT), os.environ.get("PYTHONPATH"))))}


def _progress(path: Path, context: GradingContext) -> dict[str, Outcome]:
    """The outcomes a worker recorded, by case id; a torn or malformed line ends the reading."""
    ids = {case.id for case in context.cases}
    known: dict[str, Outcome] = {}
    text = _read(path) or ""
    for line in text.splitlines():
        try:
            outcome = Outcome.from_json(json.loads(line))
        except (ValueError, ResultFormatError):
            break  # the line the worker died writing
        if outcome.case_id in ids:
            known[outcome.case_id] = outcome
    return known


def failed_result(
    name: str,
    impl: str,
    context: GradingContext,
    status: SubmissionStatus,
    detail: str,
    duration_s: float,
    timed_out: bool = False,
    known: Mapping[str, Outcome] | None = None,
    isolation: str = "none",
) -> SubmissionResult:
    """A result for a submission whose grading did not finish: the ``known`` outcomes kept, every other case not run.

    ``isolation`` is the one its workers used (:func:`planned_isolation`), for its row and reports.
    """
    known = known or {}
    context, chapter = _scoped_for(impl, context)
    outcomes = [known.get(case.id) or Outcome(case.id, "errored", f"{NOT_RUN}{detail}", 0.0, timed_out=timed_out) for case in context.cases]
    graded = score(context.rubric, zip(context.cases, outcomes, strict=True))
    return SubmissionResult(name, impl, name, status, detail, graded, context.rubric, duration_s, isolation=isolation, chapter=chapter)


def _scoped_for(impl: str, context: GradingContext) -> tuple[GradingContext, str]:
    """``context`` scoped to the chapter ``impl`` is at; unchanged when ``impl`` names no implementation."""
    try:
        return scoped(context, scope_of(parse_impl(impl)))
    except ImplSpecError:
        return context, ""


def _wait(worker: Worker, limit_s: float, stop: threading.Event | None) -> int | None:
    """The worker's exit status, or None when it overran or ``stop`` was set."""
    deadline = time.monotonic() + limit_s
    while True:
        try:
            return worker.wait(timeout=max(0.0, min(_POLL_S, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline or (stop is not None and stop.is_set()):
                return None


def _kill_group(worker: Worker) -> None:
    # The group outlives its leader while any member lives. Once the worker's end is known,
    # the fork server has killed its group already (before reaping it, while the group id
    # could not be reused); this kills the group of a worker still running.
    if worker.returncode is None:
        try:
            os.killpg(worker.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        worker.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _death(code: int, log: str | None) -> str:
    last = _last_line(log)
    if code == EXIT_GRADER_FAILED:
        return f"the grader failed: {last}" if last else "the grader failed"
    if code < 0:
        try:
            signame = signal.Signals(-code).name
        except ValueError:
            signame = f"signal {-code}"
        why = f"the grading worker was killed by {signame} (did the submission kill its parent process?)"
    else:
        why = f"the grading worker exited with status {code}"
    return f"{why}: {last}" if last else why


def _last_line(log: str | None) -> str:
    lines = [line.strip() for line in (log or "").splitlines() if line.strip()]
    return lines[-1][:150] if lines else ""


def _read(path: Path) -> str | None:
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    return text or None
