"""The one loop over cases: every command that runs cases against an implementation runs them here.

``run`` (the pytest plugin), ``grade``, ``matrix``, ``fuzz``, the mutation runner, the
check that the references pass every case and the reference's re-checks of one case
(:func:`run_alone`: fuzz, emit, the private set, regen) share its policy, so that the same
implementation gets the same status for every case whichever command ran it. Nothing
outside ``running/`` calls :func:`~conformance.running.execution.run_case` itself:

- a case runs with its timeout: the larger of its own ``timeout_s`` and ``--timeout``
  (:meth:`~conformance.model.cases.Case.timeout_with`; spec/fixture-format.md, Timeouts);
- the loop stops between cases when ``stop`` is set or the ``deadline`` has passed, and the
  cases left are not run (their outcome says why);
- an adapter stops trying an operation after a few timeouts (or exits) in a row, so that a
  hopeless implementation ends in bounded time. A case it then did not try may well pass on
  its own (a ``textOf`` that loops only on some messages), so each such case is run again,
  alone, in a fresh adapter with the same timeout as any case: no case is failed unless it
  failed when it was tried, and none by a clock stricter than the first run's.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from conformance.adapters.interface import Adapter
from conformance.judging.outcome import Outcome
from conformance.model.cases import BrokenCase, Case
from conformance.running.execution import call_quietly, run_case

#: Why a case has no outcome of its own: the outcome's message starts with this.
NOT_RUN = "not run: "
#: Given-up cases are retried this many at a time, each worker with its own fresh process:
#: a hang that burns no CPU (a promise that never resolves) then costs a fraction of the time.
#: The bound on retry adapters alive at once; they share the submission's one budget of memory
#: and processes (``conformance/isolation/budget.py``), so retrying never multiplies it.
RETRY_WORKERS = 4

AdapterFactory = Callable[[], Adapter]
#: What a caller keeps of a case's outcome (grading bounds the text it quotes, and turns its own failure into the case's).
OutcomeKeeper = Callable[[Case, Outcome], Outcome]


@dataclass
class Policy:
    """How a loop runs its cases: timeout, budget, stop, and what is kept of each outcome."""

    #: ``--timeout`` (None: not given); a case's own ``timeout_s`` is a floor (:meth:`Case.timeout_with`).
    timeout_s: float | None = None
    #: ``time.monotonic()`` past which no case starts; the budget in seconds, for the message.
    deadline: float | None = None
    budget_s: float | None = None
    #: Set by another thread to end the loop after the case in flight.
    stop: threading.Event | None = None
    #: What is kept of each outcome, retries included (None: all of it).
    keep: OutcomeKeeper | None = None
    #: Outcomes already known (a resumed batch): those cases are not run again.
    given: Mapping[str, Outcome] = field(default_factory=dict)
    #: Retry the cases an adapter gave up on (see the module's docstring).
    retry: bool = True

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def run(self, adapter: Adapter, case: Case) -> Outcome:
        """One run of ``case`` on ``adapter`` with :attr:`timeout_s`, as :attr:`keep` keeps it."""
        outcome = run_case(adapter, case, self.timeout_s)
        return outcome if self.keep is None else self.keep(case, outcome)


@dataclass
class Loop:
    """One pass over cases with one adapter, by :class:`Policy`; the outcomes, in case order."""

    policy: Policy
    #: A fresh adapter of the same implementation, for retries.
    fresh: AdapterFactory
    #: Learns each outcome as it is kept (before any retry): grading records progress with it.
    on_outcome: Callable[[Outcome], Outcome] | None = None
    #: Set once a case was not run because the deadline had passed.
    budget_exhausted: bool = False

    def run(self, adapter: Adapter, cases: Sequence[Case]) -> list[Outcome]:
        """Run ``cases`` on ``adapter`` (closed at the end), then retry those it gave up on."""
        outcomes: list[Outcome] = []
        try:
            for case in cases:
                outcomes.append(self.one(adapter, case))
        finally:
            close(adapter)
        if self.policy.retry and any(outcome.given_up for outcome in outcomes) and not self.budget_exhausted:
            self.budget_exhausted = retry_given_up(self.fresh, cases, outcomes, self.policy)
        return outcomes

    def one(self, adapter: Adapter, case: Case) -> Outcome:
        """One case on ``adapter``, unless the loop was stopped or ran out of time (checked between cases)."""
        policy = self.policy
        if policy.stop is not None and policy.stop.is_set():
            return Outcome(case.id, "errored", f"{NOT_RUN}grading was interrupted", 0.0)
        if policy.out_of_time():
            self.budget_exhausted = True
            return Outcome(case.id, "errored", f"{NOT_RUN}the submission used up its {policy.budget_s:g} s budget", 0.0)
        if case.id in policy.given:
            return policy.given[case.id]
        outcome = policy.run(adapter, case)
        return self.on_outcome(outcome) if self.on_outcome is not None else outcome


def run_one(adapter: Adapter, case: Case | BrokenCase, fresh: AdapterFactory, policy: Policy | None = None) -> Outcome:
    """One case on a shared adapter, retried alone when given up: what a caller that runs cases one by one uses."""
    policy = policy or Policy()
    if not isinstance(case, Case):
        return run_case(adapter, case, policy.timeout_s)  # a broken fixture: reported, nothing to retry
    outcomes = [policy.run(adapter, case)]
    if policy.retry and outcomes[0].given_up:
        retry_given_up(fresh, [case], outcomes, policy)
    return outcomes[0]


def run_alone(adapter: Adapter, case: Case | BrokenCase, timeout_s: float | None = None, fresh: AdapterFactory | None = None) -> Outcome:
    """One case outside any loop, by the same policy: a reference's re-check of a case (fuzz, emit, the private set, regen).

    With ``fresh``, a case the adapter gave up on is run again alone in a fresh adapter, as
    every loop does; without it, that outcome stands (there is nothing to retry it in).
    """
    return run_one(adapter, case, fresh or _no_fresh_adapter, Policy(timeout_s=timeout_s, retry=fresh is not None))


def _no_fresh_adapter() -> Adapter:
    raise RuntimeError("run_alone without fresh never retries")


def retry_given_up(fresh: AdapterFactory, cases: Sequence[Case], outcomes: list[Outcome], policy: Policy) -> bool:
    """Run each case the adapter gave up on again, in a fresh adapter with its own timeout; replaces its outcome.

    Returns True when the deadline passed meanwhile (the cases left keep their first outcome).
    """
    retries = _Retries(fresh, cases, outcomes, policy)
    for index, outcome in enumerate(outcomes):
        if outcome.given_up:
            retries.pending.put(index)
    count = min(RETRY_WORKERS, retries.pending.qsize())
    workers = [threading.Thread(target=_RetryWorker(retries).work, name=f"retry {n}", daemon=True) for n in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return retries.out_of_time.is_set()


@dataclass
class _Retries:
    """The given-up cases waiting for a retry, shared by the retry workers, and where their outcomes go."""

    fresh: AdapterFactory
    cases: Sequence[Case]
    outcomes: list[Outcome]
    policy: Policy
    pending: queue.SimpleQueue[int] = field(default_factory=queue.SimpleQueue)
    out_of_time: threading.Event = field(default_factory=threading.Event)

    def next_index(self) -> int | None:
        """The next case to retry; None when none is left, the run was stopped or its time ran out."""
        if self.policy.stop is not None and self.policy.stop.is_set():
            return None
        try:
            index = self.pending.get_nowait()
        except queue.Empty:
            return None
        if self.policy.out_of_time():
            self.out_of_time.set()
            return None
        return index


@dataclass
class _RetryWorker:
    """One retry thread: its own adapter, made again whenever one gives up."""

    retries: _Retries
    adapter: Adapter | None = None

    def work(self) -> None:
        try:
            while (index := self.retries.next_index()) is not None:
                self.retry(index)
        except Exception:  # the adapter could not be made again: the first run's outcomes stand
            pass
        finally:
            if self.adapter is not None:
                close(self.adapter)

    def retry(self, index: int) -> None:
        """Run case ``index`` again; an adapter that gives up is replaced once (a fresh one never gives up on its first case)."""
        retries = self.retries
        for _ in range(2):
            if self.adapter is None:
                self.adapter = retries.fresh()
            # The case's own timeout: a shorter retry clock failed correct agent scenarios on a
            # loaded CI machine (four retries share one interpreter in process).
            retried = retries.policy.run(self.adapter, retries.cases[index])
            if not retried.given_up:
                break
            close(self.adapter)
            self.adapter = None
        retries.outcomes[index] = retried


def close(adapter: Adapter) -> None:
    """Close ``adapter``; a failing close (an exit its code raises included) must not lose the outcomes."""
    call_quietly(adapter.close)
