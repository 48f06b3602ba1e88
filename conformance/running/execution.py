"""Run one case against an adapter, under a timeout, and judge the observation."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from conformance.adapters.interface import (
    DEFAULT_SETTLE_DEADLINE_S,
    Adapter,
    AdapterFailure,
    GaveUp,
    HarnessError,
    HarnessTimeout,
    ImplementationHung,
    ImplementationThrew,
    NotStarted,
    NotTried,
    OperationNotSupported,
    track_abandonment,
)
from conformance.adapters.kinds import impl_examples
from conformance.common.jsontypes import JsonObject
from conformance.common.student_text import cap, schema_problem, scrub
from conformance.common.user_interrupts import watching_interrupts
from conformance.judging.divergences import compare
from conformance.judging.outcome import Outcome, Status
from conformance.model.cases import BrokenCase, Case
from conformance.model.features import not_claimed_reason
from conformance.model.profiles import get_profile, mismatch_message
from conformance.model.schemas import validator
from conformance.running.derived import derive


class _Timeout(Exception):
    pass


class ImplementationExited(BaseException):
    """The implementation's own code raised ``SystemExit`` or ``KeyboardInterrupt``: its case errors, the run goes on.

    A ``BaseException``, so that no ``except Exception`` on the way takes it for the adapter's own failure.
    """

    def __init__(self, raised: BaseException) -> None:
        super().__init__(raised_text(raised))
        self.raised = raised


class _Worker:
    """A daemon thread that runs one calling thread's cases one after another (a thread per case costs a start each).

    Each calling thread has its own worker (the grader retries cases from several threads at
    once: none may wait behind another's case). A worker whose case overran is abandoned (it
    ends once that case returns, if ever) and the next case gets a new one; an idle worker
    ends soon after its calling thread has ended.
    """

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.abandoned = False
        self.owner = threading.current_thread()
        self.thread = threading.Thread(target=self._serve, name=f"cases of {self.owner.name}", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            while not self.abandoned:
                try:
                    job = self.jobs.get(timeout=_IDLE_CHECK_S)
                except queue.Empty:
                    if not self.owner.is_alive():
                        return
                    continue
                try:
                    job()
                except BaseException:  # an exception sent into this thread to stop an overrunning case
                    continue
        except BaseException:  # the same, landing between two cases: this worker ends quietly
            return


_IDLE_CHECK_S = 2.0
_workers = threading.local()


def _take_worker() -> _Worker:
    worker: _Worker | None = getattr(_workers, "worker", None)
    if worker is None or worker.abandoned or not worker.thread.is_alive():
        worker = _Worker()
        _workers.worker = worker
    return worker


def observe(adapter: Adapter, case: Case, timeout_s: float) -> JsonObject:
    """Run the case's operation in the worker thread; raise ``_Timeout`` if it overruns.

    A thread lets a hung in-process implementation fail its own case: the worker is
    abandoned (it is a daemon) and the run goes on with a new one.
    """
    box: dict[str, object] = {}
    finished = threading.Event()
    abandoned = threading.Event()

    def work() -> None:
        track_abandonment(abandoned)
        try:
            box["observation"] = adapter.perform(case.operation, case.input, list(case.steps))
        except BaseException as error:  # handed to the caller's thread, which classifies it
            box["error"] = error
        finally:
            finished.set()

    worker = _take_worker()
    worker.jobs.put(work)
    in_time = False
    try:
        in_time = finished.wait(timeout_s)
    finally:
        # Overran, or Ctrl-C (or SIGTERM made one) while it ran: stop the case, so that closing
        # the adapter next does not wait on a request that may never be answered.
        if not in_time:
            worker.abandoned = True  # it ends once its case returns, if ever
            abandoned.set()  # before cancel(): a request not yet sent is then never sent
            call_quietly(adapter.cancel)
    if not in_time:
        raise _Timeout
    if "error" in box:
        error = box["error"]
        if isinstance(error, KeyboardInterrupt | SystemExit):
            # Raised by the implementation's own code in the worker thread: the user's Ctrl-C and
            # SIGTERM land on the calling thread, never here, so this one must not stop the run.
            raise ImplementationExited(error) from error
        raise error  # type: ignore[misc]
    return box["observation"]  # type: ignore[return-value]


WAITING_ACTIONS = frozenset({"consume", "result"})


def time_budget(case: Case, timeout_s: float | None = None) -> float:
    """The case's timeout (:meth:`Case.timeout_with`: its own ``timeout_s`` is a floor) plus one settle deadline per waiting step.

    Waiting steps report what they saw after the settle deadline, so a stream that never
    ends fails at its step with a precise message instead of timing the whole case out.
    """
    waits = sum(1 for step in case.steps if step.get("action") in WAITING_ACTIONS)
    return case.timeout_with(timeout_s) + waits * DEFAULT_SETTLE_DEADLINE_S


def run_case(adapter: Adapter, case: Case | BrokenCase, timeout_s: float | None = None) -> Outcome:
    """Run one case and return its outcome; never raises for anything the implementation does."""
    started = time.perf_counter()

    def done(status: Status, message: str, **extra: object) -> Outcome:
        # Messages quote the implementation (what it threw, its stderr): bounded, and valid Unicode.
        return Outcome(case.id, status, cap(scrub(message)), time.perf_counter() - started, **extra)  # type: ignore[arg-type]

    if isinstance(case, BrokenCase):
        located = case.located_problems()
        return done("errored", "broken fixture:\n" + "\n".join(f"  {case.file}:{line}: {p}" for line, p in located))
    limit = time_budget(case, timeout_s)
    try:
        observation = _observe_case(adapter, case, limit, done)
    except _Timeout:
        return done("failed", f"timed out: {case.operation} did not return within {limit:g} s", timed_out=True)
    except AdapterFailure as error:
        return _adapter_failure(error, done)
    except Exception as error:  # a broken adapter fails only its own case
        return done("errored", f"the adapter failed: {type(error).__name__}: {error}")
    except BaseException as error:
        # A port's CancelledError (or GeneratorExit) must not take the case out of every total;
        # only the user's Ctrl-C and an exit stop the run.
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        raised = error.raised if isinstance(error, ImplementationExited) else error
        return done("errored", f"the implementation raised {raised_text(raised)}")
    if isinstance(observation, Outcome):
        return observation
    try:
        # What the harness derives from the observation (derived.py) is added before judging, whatever the transport.
        return _judge(adapter, case, derive(case, observation), done)
    except Exception as error:  # an answer the grader cannot judge (nested past the recursion limit...) errors its own case
        return done("errored", f"{GRADER_ERROR}: judging the answer failed: {type(error).__name__}: {error}")


def _observe_case(adapter: Adapter, case: Case, limit: float, done: Callable[..., Outcome]) -> JsonObject | Outcome:
    """Prepare the adapter and observe the case; an outcome instead when the case is not one for this implementation."""
    try:
        _prepare(adapter, case)
    except OperationNotSupported:
        if adapter.profile is None or adapter.profile == case.profile:
            raise
    # An implementation of another profile fails with the reason, not with unrelated divergences.
    if adapter.profile is not None and adapter.profile != case.profile:
        return done("failed", mismatch_message(adapter.name, adapter.profile, case.profile, impl_examples(case.profile)))
    unclaimed = not_claimed_reason(case.features, frozenset(adapter.unclaimed_features))
    if unclaimed is not None:  # the implementation said so in its handshake
        return done("skipped", unclaimed)
    return observe(adapter, case, limit)


def _prepare(adapter: Adapter, case: Case) -> None:
    """``adapter.prepare``: an exit its code raises (a port's own ``Adapter`` runs here, in the caller's thread) is the case's."""
    with watching_interrupts() as watch:
        try:
            adapter.prepare(case.operation, case.lab)
        except Exception:
            raise
        except BaseException as error:
            if watch.users(error):
                raise  # the user's Ctrl-C stops the run
            raise ImplementationExited(error) from error


def call_quietly(hook: Callable[[], object]) -> None:
    """Call an adapter's ``cancel`` or ``close``: whatever it raises is dropped (``SystemExit`` too), but the user's Ctrl-C.

    The outcomes are known by then; a port's own ``Adapter`` must not lose them, nor stop the run.
    """
    with watching_interrupts() as watch:
        try:
            hook()
        except BaseException as error:
            if watch.users(error):
                raise


def raised_text(error: BaseException) -> str:
    """``Type: message``, or just ``Type`` when the exception says nothing (``KeyboardInterrupt()``)."""
    said = str(error)
    return f"{type(error).__name__}: {said}" if said else type(error).__name__


def _adapter_failure(error: AdapterFailure, done: Callable[..., Outcome]) -> Outcome:
    """What a failure the adapter reported means for its case (the most specific kind first)."""
    if isinstance(error, OperationNotSupported):
        return done("skipped", f"not implemented: {error}")
    if isinstance(error, ImplementationThrew):
        return done("failed", f"the implementation threw: {error}")
    if isinstance(error, ImplementationHung):
        return done("failed", f"hung: {error}", hung=True)
    if isinstance(error, GaveUp):
        return done("failed", str(error), timed_out=True, given_up=True)
    if isinstance(error, NotTried):
        return done("errored", str(error), given_up=True)
    if isinstance(error, NotStarted):
        return done("errored", str(error))  # as deterministic as loading: nothing to retry
    if isinstance(error, HarnessTimeout):
        return done("errored", f"could not observe the implementation: {error}", timed_out=True)
    if isinstance(error, HarnessError):
        return done("errored", f"could not observe the implementation: {error}")
    return done("errored", f"the adapter failed: {type(error).__name__}: {error}")


#: How an outcome says the grader itself failed on this case (not the implementation).
GRADER_ERROR = "grader error"


def _judge(adapter: Adapter, case: Case, observation: JsonObject, done: Callable[..., Outcome]) -> Outcome:
    """Check the observation against the operation's schema, then compare it with the case's expectations."""
    observation_schema = get_profile(case.profile).observation_schema
    trusted = adapter.observations_trusted
    schema_error = None if trusted else next(iter(validator(observation_schema, f"/$defs/{case.operation}").iter_errors(observation)), None)
    if schema_error is not None:
        return done("errored", f"the adapter returned a malformed observation {schema_problem(schema_error)}")
    divergence, step_index = compare(case, observation)
    if divergence is None:
        return done("passed", "", observation=observation)
    return done("failed", str(divergence), divergence=divergence, step_index=step_index, observation=observation)
