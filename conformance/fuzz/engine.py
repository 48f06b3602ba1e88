"""The differential loop: draw programs, run them on the reference and on X, shrink a divergence.

Both sides are reached through the same :class:`~conformance.adapters.interface.Adapter` interface and
judged by the same engine (:mod:`conformance.running.engine`): the program becomes a case whose
expectations are the reference's observation (loosened where the spec is open), the
reference must pass it, and a divergence is X failing it. Hypothesis then shrinks the
program while X keeps failing *the same way* (same operation, same path up to indexes), so
the case that comes out is small and still about the first bug found.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from random import Random

from hypothesis import HealthCheck, Phase, find, settings

from conformance.adapters.interface import Adapter, AdapterFailure
from conformance.fuzz.constants import without_local_constants
from conformance.fuzz.expect import build_case, clauses_for
from conformance.fuzz.operations import fuzz_mix
from conformance.fuzz.strategies import Program
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.running.engine import AdapterFactory, Policy, run_alone, run_one

#: What the fuzzer draws (:func:`conformance.fuzz.operations.fuzz_mix`), built once.
programs = fuzz_mix()


class _OutOfTime(Exception):
    """The budget ran out before any divergence: stop drawing."""


class _DoneShrinking(Exception):
    """Shrinking ran out of its own budget: keep the smallest program accepted so far."""


@dataclass
class Finding:
    """A shrunk divergence: the case (expectations from the reference) and what X did with it."""

    case: Case
    program: Program
    outcome: Outcome
    #: Seconds from the start until the first (unshrunk) divergence.
    first_divergence_s: float
    shrink_s: float


@dataclass
class FuzzStats:
    """How the run went, for the summary line."""

    examples: int = 0
    reference_failures: int = 0
    started: float = field(default_factory=time.perf_counter)


def _signature(program: Program, outcome: Outcome) -> tuple[str, str]:
    path = outcome.divergence.path if outcome.divergence else outcome.message.split(":")[0]
    return program.operation, re.sub(r"\[\d+\]", "[]", path)


#: How programs are drawn: Hypothesis's ``find`` with these settings and ``random=Random(seed)``
#: (inside :func:`~conformance.fuzz.constants.without_local_constants`) draws the same programs
#: for the same seed in any process. ``pi-conformance private-set`` draws with them too.
DRAW_SETTINGS = settings(
    max_examples=10**9,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    # The explain phase re-runs the shrunk example with variations to annotate a traceback;
    # a finding here is a case, not a traceback, and that phase overran the shrink budget.
    phases=[phase for phase in Phase if phase is not Phase.explain],
)


def reference_case(reference: Adapter, program: Program) -> Case | None:
    """The program as a case, its expectations from one run on ``reference``; None when the reference cannot run it."""
    try:
        reference.prepare(program.operation, "")
        observation = reference.perform(program.operation, program.input, program.steps)
    except AdapterFailure:
        return None
    return build_case(program, observation)


class Differ:
    """Runs programs on both adapters and says whether X diverges from the reference."""

    def __init__(
        self, reference: Adapter, implementation: Adapter, timeout_s: float | None = None, fresh: AdapterFactory | None = None
    ) -> None:
        self.reference = reference
        self.implementation = implementation
        self.timeout_s = timeout_s
        #: A new adapter of X: a program X's adapter gave up on is run again in one (the engine's policy), when given.
        self.fresh = fresh
        self.stats = FuzzStats()

    def case_for(self, program: Program) -> Case | None:
        """The program as a case (expectations from the reference's run), or None when the reference cannot run it."""
        case = reference_case(self.reference, program)
        if case is None:
            self.stats.reference_failures += 1
        return case

    def diverges(self, program: Program) -> tuple[Case, Outcome] | None:
        """``(case, X's outcome)`` when X fails the case and the reference passes it again; None otherwise."""
        self.stats.examples += 1
        case = self.case_for(program)
        if case is None:
            return None
        policy = Policy(timeout_s=self.timeout_s, retry=self.fresh is not None)
        outcome = run_one(self.implementation, case, self.fresh or (lambda: self.implementation), policy)
        # failed only: a skipped operation is not implemented yet, an errored one is the harness's problem.
        if outcome.status != "failed":
            return None
        # The reference must pass its own expectations on a second run: a value that differs
        # between runs (a clock, say) would make the case flaky, and such a case is dropped.
        # Asked only once X failed, since most programs do not diverge: one reference run fewer each.
        if run_alone(self.reference, case, self.timeout_s).status != "passed":
            self.stats.reference_failures += 1
            return None
        return case, outcome


def fuzz(
    differ: Differ,
    seconds: float,
    seed: int,
    on_example: Callable[[int], None] | None = None,
    shrink_seconds: float = 30.0,
    max_examples: int | None = None,
) -> Finding | None:
    """Draw programs for up to ``seconds`` (and ``max_examples``); shrink (up to ``shrink_seconds``) and return the first divergence.

    With ``max_examples`` and a time budget that does not run out, a run draws the same
    programs on every machine: the seed and the count decide, not the machine's speed.
    """
    search = _Search(differ, seconds, shrink_seconds, max_examples, on_example)
    program = _shrunk_divergence(search, seed)
    if program is None:
        return None
    result = differ.diverges(program)
    if result is None:  # flaky: the shrunk program no longer diverges on a last run
        return None
    program, result = without_unneeded_messages(differ, program, result)
    case, outcome = result
    path = outcome.divergence.path if outcome.divergence is not None else ""
    case = replace(case, clauses=tuple(clauses_for(program, path)))
    assert search.found_at is not None  # a program diverged
    return Finding(case, program, outcome, search.found_at, search.elapsed_s - search.found_at)


@dataclass
class _Search:
    """Hypothesis's condition for one fuzz run: a program that diverges as the first one found did, within the time."""

    differ: Differ
    seconds: float
    shrink_seconds: float
    max_examples: int | None
    on_example: Callable[[int], None] | None
    started: float = field(default_factory=time.perf_counter)
    #: When the first divergence was found (seconds into the run), and its signature.
    found_at: float | None = None
    target: tuple[str, str] | None = None
    #: The smallest program so far that diverges as the first one did.
    best: Program | None = None

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.started

    def holds(self, program: Program) -> bool:
        """Whether ``program`` diverges as the first divergence did (any divergence, before one is found)."""
        self._check_time()
        result = self.differ.diverges(program)
        if self.on_example is not None:
            self.on_example(self.differ.stats.examples)
        if result is None:
            return False
        signature = _signature(program, result[1])
        if self.target is None:
            self.found_at = self.elapsed_s
            self.target = signature
        elif signature != self.target:
            return False  # while shrinking, keep to the divergence found first: another bug is another case
        self.best = program
        return True

    def _check_time(self) -> None:
        """Stop drawing once the time or the examples run out; stop shrinking after ``shrink_seconds``."""
        if self.found_at is None and (self.elapsed_s > self.seconds or self.differ.stats.examples == self.max_examples):
            raise _OutOfTime
        if self.found_at is not None and self.elapsed_s - self.found_at > self.shrink_seconds:
            raise _DoneShrinking


def _shrunk_divergence(search: _Search, seed: int) -> Program | None:
    """The program Hypothesis found and shrank, or the best one kept when a stop cut it short; None when none diverged."""
    try:
        with without_local_constants():
            found: Program = find(programs, search.holds, settings=DRAW_SETTINGS, random=Random(seed))
            return found
    except BaseException as error:
        # Our own stop signals arrive bare or, when hypothesis saw them while shrinking, in an
        # exception group (with hypothesis's own Flaky report when a stop interrupted a replay);
        # NoSuchExample / Unsatisfiable mean nothing was found. Anything else is a bug. What is
        # kept is checked again by the caller, so a stop that cut a replay short costs nothing.
        if not _has_stop(error) and type(error).__name__ not in {"NoSuchExample", "Unsatisfiable"}:
            raise
        return search.best


def without_unneeded_messages(differ: Differ, program: Program, result: tuple[Case, Outcome]) -> tuple[Program, tuple[Case, Outcome]]:
    """The program without each input message the divergence does not need (one at a time, first to last).

    Hypothesis shrinks a list by its tail and its values; a message in the middle that the
    bug does not need can survive it. A removal is kept when the same divergence remains.
    """
    messages = program.input.get("messages")
    if not isinstance(messages, list):
        return program, result
    signature = _signature(program, result[1])
    index = 0
    while index < len(messages) and len(messages) > 1:
        fewer = [*messages[:index], *messages[index + 1 :]]
        candidate = replace(program, input={**program.input, "messages": fewer})
        found = differ.diverges(candidate)
        if found is not None and _signature(candidate, found[1]) == signature:
            program, result, messages = candidate, found, fewer
        else:
            index += 1
    return program, result


def _has_stop(error: BaseException) -> bool:
    if isinstance(error, _OutOfTime | _DoneShrinking):
        return True
    if isinstance(error, BaseExceptionGroup):
        return any(_has_stop(inner) for inner in error.exceptions)
    return isinstance(error.__cause__, _OutOfTime | _DoneShrinking) or isinstance(error.__context__, _OutOfTime | _DoneShrinking)
