"""A grading worker: one submission graded in a process of its own.

The batch (:mod:`conformance.farm.job`) hands each submission to a new worker,
forked from the workers' fork server (:mod:`conformance.farm.forkserver`) in a new session.
The job is a pickle of :class:`Job` (written by the grader itself, read before any student
code runs). The worker grades with
:func:`grade_submission` and writes the result as JSON (:mod:`result_json`) to the job's
``result_path``, atomically. Each case's outcome is also appended to the job's
``progress_path`` (JSON lines) as soon as it is known: whatever the submission does to this
process (kill it, exhaust it), the outcomes already known are kept, and the supervisor
grades the cases left in a new worker.

Nothing of the job reaches the submission: it is not in this process's argv or
environment, and stdin is /dev/null before grading starts.
"""

from __future__ import annotations

import ctypes
import json
import os
import pickle
import signal
from dataclasses import dataclass
from pathlib import Path

from conformance.adapters.kinds import Impl
from conformance.common.atomic_file import write_text_atomic
from conformance.grading.grader import GradeOptions, GradingContext, SubmissionResult, grade_submission
from conformance.grading.result_json import result_to_json
from conformance.isolation.budget import submission_budget
from conformance.judging.outcome import Outcome

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: Exit status of a worker whose grading itself failed (a grader bug); the log has the traceback.
EXIT_GRADER_FAILED = 3


@dataclass(frozen=True)
class Job:
    """One submission to grade, as the batch hands it to a worker (pickled: the Impl travels parsed)."""

    impl: Impl
    name: str
    context: GradingContext
    options: GradeOptions
    result_path: Path
    #: Where each outcome is appended as a JSON line the moment it is known.
    progress_path: Path
    #: Outcomes known from an earlier worker of the same submission: not run again.
    given: tuple[Outcome, ...] = ()


def die_with_parent(parent_pid: int, adopt_orphans: bool) -> None:
    """Be SIGKILLed when the parent dies (Linux); exit now if it already has.

    The fork server dies with the batch, and each worker with the fork server, instead of
    grading on. A worker also adopts what its own descendants orphan while it lives
    (``adopt_orphans``), so the batch's sweep (conformance.farm.reaper) only ever meets
    what a dead worker left; the server must not, or it would adopt what dead workers left.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if adopt_orphans:
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def run(job: Job) -> SubmissionResult:
    """Grade the job's submission, recording each outcome in its progress file, and write its result file."""
    given = {outcome.case_id: outcome for outcome in job.given}
    with job.progress_path.open("a", encoding="utf-8") as progress:

        def record(outcome: Outcome) -> None:
            # Flushed per line: a worker killed the next moment still leaves it in the file.
            progress.write(json.dumps(outcome.to_json(), ensure_ascii=False) + "\n")
            progress.flush()

        # One budget for all it runs: build, adapter, retries and the held-out phase.
        with submission_budget(job.options.settings.resource_limits()):
            result = grade_submission(job.impl, job.context, job.options, name=job.name, given=given, on_outcome=record)
    write_text_atomic(job.result_path, json.dumps(result_to_json(result), ensure_ascii=False))
    return result


def run_job(job_bytes: bytes, parent_pid: int) -> int:
    """Grade the pickled :class:`Job` (stdin and stdout already set up); the exit status."""
    job = pickle.loads(job_bytes)
    assert isinstance(job, Job)
    die_with_parent(parent_pid, adopt_orphans=True)
    try:
        run(job)
    except Exception:  # a grader bug: the batch reports it on this submission's row
        import traceback

        traceback.print_exc()
        return EXIT_GRADER_FAILED
    return 0
