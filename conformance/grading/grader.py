"""Grade one submission: build it (optionally), run the rubric's cases with a fresh adapter, score.

Grading runs the cases through the engine (:class:`conformance.running.engine.Loop`, by the
same :class:`~conformance.running.engine.Policy` as ``run`` and ``matrix``), not through
pytest: it is faster, gives structured outcomes, and lets a batch run many submissions in
one process. Nothing a submission does makes :func:`grade_submission` raise; what happened
is its :class:`SubmissionResult`'s ``status``.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds import Impl, ImplSpecError, parse_impl
from conformance.adapters.settings import ImplSettings
from conformance.adapters.stray_output import StrayOutput
from conformance.common.student_text import BUILD_LOG_LIMIT, QUOTE_LIMIT, Budget, cap, path_text, prune_json, scrub
from conformance.grading.chapter_scope import scope_of, scoped
from conformance.grading.rubric import Rubric, RubricError
from conformance.grading.scoring import Score, score
from conformance.grading.status import NOT_RUN, SubmissionStatus, classify
from conformance.judging.bearing import is_silent_stream
from conformance.judging.outcome import Divergence, Outcome
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.model.clauses import Clause, load_profile_clauses
from conformance.running.engine import Loop, Policy
from conformance.running.execution import GRADER_ERROR


@dataclass(frozen=True)
class GradingContext:
    """What every submission of a run is graded against: the rubric, its cases, the clauses."""

    rubric: Rubric
    cases: tuple[Case, ...]
    clauses: Mapping[str, Clause]
    #: The rubric's labs left out for the chapter the submission is at (:func:`.chapter_scope.scoped`).
    left_out: tuple[str, ...] = ()
    #: Ids of the cases left out because a later chapter the submission is at changes what they check.
    superseded: tuple[str, ...] = ()


def prepare(rubric: Rubric, fixtures: Path | None = None, held_out: Path | None = None) -> GradingContext:
    """Load the fixtures of the rubric's profile and check the rubric against them.

    Refuses broken fixtures and rubric typos (:class:`RubricError`): a score computed from
    a suite that lost cases, or from a tag that matches nothing, would be silently wrong.

    ``held_out`` is a folder of extra fixture files of the same profile (a private set staff
    wrote): its cases are graded beside the public ones, in their labs, and every one of them
    is held out (as if the rubric's ``held_out:`` listed it). An id that clashes with a public
    case's is refused.
    """
    clauses = load_profile_clauses(rubric.profile)
    suite = load_suite(fixtures, clauses, rubric.profile)
    if suite.broken:
        raise RubricError("the fixtures have problems; fix them before grading:\n  " + "\n  ".join(suite.problems))
    cases = list(suite.cases)
    if held_out is not None:
        extra = _held_out_cases(held_out, clauses, rubric.profile, {case.id: case.location for case in cases})
        rubric = replace(rubric, held_out=rubric.held_out | {case.id for case in extra})
        cases += extra
    problems = rubric.check_against(cases, clauses)
    if problems:
        raise RubricError(f"{rubric.source}: the rubric does not fit the fixtures:\n  " + "\n  ".join(problems))
    return GradingContext(rubric, tuple(case for case in cases if rubric.selects(case)), clauses)


def _held_out_cases(folder: Path, clauses: Mapping[str, Clause], profile: str, public: Mapping[str, str]) -> list[Case]:
    """The cases of a held-out folder, refused when broken, empty or clashing with a public id."""
    if not folder.is_dir():
        raise RubricError(f"--held-out: {folder} is not a folder")
    suite = load_suite(folder, clauses, profile)
    if suite.broken:
        raise RubricError(f"--held-out: the fixtures in {folder} have problems; fix them before grading:\n  " + "\n  ".join(suite.problems))
    if not suite.cases:
        raise RubricError(f"--held-out: {folder} holds no case of profile {profile} (fixture files *.yaml, *.yml)")
    clashes = [f"{case.id} ({case.location}) is also a public case ({public[case.id]})" for case in suite.cases if case.id in public]
    if clashes:
        raise RubricError("--held-out: held-out case ids must differ from the public ones; rename:\n  " + "\n  ".join(clashes))
    return suite.cases


_COMPILER_ERROR = re.compile(r"\berror\b", re.IGNORECASE)


def build_summary(report: str) -> str:
    """One line for a failed build: how it exited and the first compiler error in its output."""
    lines = [line.strip() for line in report.splitlines() if line.strip()]
    if not lines:
        return "the build failed"
    # npm's own "npm error ..." lines and the echoed "> command" lines only repeat the failure.
    error = next((line for line in lines[1:] if _COMPILER_ERROR.search(line) and not line.startswith(("npm ", ">"))), None)
    head = lines[0].rstrip(":")
    return f"{head}: {error}" if error else head


def planned_isolation(impl: str, settings: ImplSettings) -> str:
    """The isolation a submission gets (or would have got) with ``settings``, for reports."""
    return parse_impl(impl).planned_isolation(settings)


def bounded(outcome: Outcome, budget: Budget) -> Outcome:
    """The outcome as it is kept: its texts within the submission's :class:`Budget`, its observation pruned.

    Everything here may quote the implementation; a megabyte answer to every case would
    otherwise be held, written to every report and printed, once per case.
    """
    divergence = outcome.divergence
    if divergence is not None:
        path, expected, actual, note, key = (
            budget.take(text) for text in (divergence.path, divergence.expected, divergence.actual, divergence.note, divergence.key)
        )
        divergence = Divergence(path, expected, actual, note, divergence.kind, key)
    observation = prune_json(outcome.observation)[0] if outcome.observation is not None else None
    return replace(outcome, message=budget.take(outcome.message), divergence=divergence, observation=observation)


def grader_error(case_id: str, doing: str, error: BaseException) -> Outcome:
    """The outcome of a case whose handling failed in the grader itself: that case errors, no other."""
    said = cap(scrub(str(error)), QUOTE_LIMIT)
    return Outcome(case_id, "errored", f"{GRADER_ERROR}: {doing} failed: {type(error).__name__}: {said}", 0.0)


def _recorded(on_outcome: Callable[[Outcome], None], outcome: Outcome) -> Outcome:
    """Tell ``on_outcome``; if that fails, the case is a grader error (told too, if it can be)."""
    try:
        on_outcome(outcome)
        return outcome
    except Exception as error:
        replacement = grader_error(outcome.case_id, "recording the outcome", error)
        try:
            on_outcome(replacement)
        except Exception:  # the result still carries it
            pass
        return replacement


@dataclass(frozen=True)
class GradeOptions:
    """How to run a submission."""

    settings: ImplSettings = field(default_factory=ImplSettings)
    #: Build a ``pi-course:`` project first, the rubric's way (``build:``: staff files pinned, the grader's own tsc; offline).
    build: bool = True
    #: ``--timeout`` (None: not given); a case's own ``timeout_s`` is a floor (:meth:`Case.timeout_with`).
    case_timeout_s: float | None = None
    #: Wall-clock budget for running the cases; the cases left when it runs out are not run.
    budget_s: float | None = None


@dataclass(frozen=True)
class SubmissionResult:
    """One graded submission."""

    name: str
    impl: str
    implementation: str
    status: SubmissionStatus
    detail: str
    score: Score
    rubric: Rubric
    duration_s: float
    build_report: str | None = None
    #: How the submission's code was isolated: ``bwrap``, ``none`` or ``in-process`` (``python:``).
    isolation: str = "none"
    #: Which resource limits held for its programs, and by what (``conformance.isolation.limits.describe``).
    limits: str = ""
    #: Notes for the student that cost nothing (output written outside the protocol): visible phase only.
    notes: tuple[str, ...] = ()
    #: The chapter it was graded at and why, and the labs left out (:mod:`.chapter_scope`); empty: every lab.
    chapter: str = ""

    def __post_init__(self) -> None:
        # The name and the --impl quote a folder's name, whose bytes need not be UTF-8: every
        # report, row and line that shows them must be able to write them (issue 32).
        object.__setattr__(self, "name", path_text(self.name))
        object.__setattr__(self, "impl", path_text(self.impl))


def grade_submission(
    impl: Impl | str,
    context: GradingContext,
    options: GradeOptions | None = None,
    name: str | None = None,
    stop: threading.Event | None = None,
    given: Mapping[str, Outcome] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> SubmissionResult:
    """Grade the implementation ``impl`` against ``context``: parsed (as ``grade-batch`` carries it to its
    workers), or an ``--impl`` text, parsed here once (a caller's boundary: the library's, the tests').

    ``stop``, when set by another thread (a batch being interrupted), ends the grading after
    the case in flight; the cases left are not run. ``given`` holds outcomes already known
    (a batch resuming after its worker died): those cases are not run again. ``on_outcome``
    learns each case's outcome as soon as it is known: the visible cases in case order, then
    the held-out ones (run last, by a fresh adapter).
    """
    options = options or GradeOptions()
    parsed = impl if isinstance(impl, Impl) else parse_impl(impl)
    submission = _Submission(parsed.spec, parsed, context, options, name or parsed.name)
    # The labs of chapters the submission has not reached are left out of its rubric (docs/grading.md):
    # a folder with no project is at chapter 04 too, so its not-run result is out of what a start earns.
    context, chapter = scoped(context, scope_of(parsed))
    submission = replace(submission, context=context, chapter=chapter)
    problem = parsed.layout_problem()
    if problem is not None:
        return submission.not_run("not-a-project", problem, problem)
    # Built here rather than when the adapter starts, which prints the build log on stderr:
    # in a batch that log belongs in the submission's row and report, not the terminal.
    # The rubric decides how a submission is built (its staff files, the grader's command), never the submission.
    built = parsed.build(replace(options.settings, staff_build=context.rubric.build)) if options.build else None
    if built is None:
        return _grade_cases(submission, stop, given or {}, on_outcome)
    if built.report is not None:
        summary = build_summary(built.report)
        return submission.not_run("build-failed", summary, f"the build failed ({summary})", built.report)
    # The built copy is graded (same folder name, so the same name in reports), then removed.
    try:
        copy = parsed.at(built.target)
        graded = grade_submission(copy, context, replace(options, build=False), submission.name, stop, given, on_outcome)
    finally:
        built.remove()
    # The chapter as read from the submission itself (the copy is graded on the labs already chosen).
    return replace(graded, impl=parsed.spec, duration_s=time.perf_counter() - submission.started, chapter=submission.chapter)


@dataclass(frozen=True)
class _Submission:
    """One submission being graded, and how its result is made."""

    impl: str
    parsed: Impl
    context: GradingContext
    options: GradeOptions
    name: str
    started: float = field(default_factory=time.perf_counter)
    chapter: str = ""

    def result(
        self,
        status: SubmissionStatus,
        detail: str,
        outcomes: list[Outcome],
        implementation: str,
        build_report: str | None = None,
        isolation: str | None = None,
        notes: tuple[str, ...] = (),
    ) -> SubmissionResult:
        """The submission's result: its outcomes scored, and every text that quotes it bounded."""
        graded = score(self.context.rubric, zip(self.context.cases, outcomes, strict=True), self.parsed.isolated_labs())
        duration = time.perf_counter() - self.started
        isolation = isolation or self.parsed.planned_isolation(self.options.settings)
        # The implementation's name, the detail and the build log quote the submission: bounded, valid Unicode.
        implementation, detail = cap(scrub(implementation), QUOTE_LIMIT), cap(scrub(detail))
        build_report = cap(scrub(build_report), BUILD_LOG_LIMIT) if build_report is not None else None
        limits = self.parsed.planned_limits(self.options.settings)
        return SubmissionResult(
            self.name,
            self.impl,
            implementation,
            status,
            detail,
            graded,
            self.context.rubric,
            duration,
            build_report,
            isolation,
            limits,
            notes,
            self.chapter,
        )

    def not_run(self, status: SubmissionStatus, detail: str, reason: str, build_report: str | None = None) -> SubmissionResult:
        """A result with no case run, each errored for ``reason``."""
        outcomes = [Outcome(case.id, "errored", NOT_RUN + reason, 0.0) for case in self.context.cases]
        return self.result(status, detail, outcomes, self.name, build_report)


def _grade_cases(
    submission: _Submission, stop: threading.Event | None, given: Mapping[str, Outcome], on_outcome: Callable[[Outcome], None] | None
) -> SubmissionResult:
    """Run the submission's cases, the visible ones first, and classify what they did."""
    context, options = submission.context, submission.options
    run = _Run(submission.parsed, replace(options.settings, build=options.build), context, options, stop, given, on_outcome)
    # Visible cases first, each phase in a process of its own: every visible result is fixed
    # (retries included) before any held-out input reaches the submission, so nothing that
    # saw a held-out input can leak it into visible feedback.
    for held_out in (False, True):
        indexes = [index for index, case in enumerate(context.cases) if (case.id in context.rubric.held_out) == held_out]
        failure = run.phase(indexes, notes_wanted=not held_out)
        if failure is not None and not held_out:
            return submission.not_run("invalid", failure, failure)
    outcomes = [outcome for outcome in run.outcomes if outcome is not None]
    silent = [outcome for case, outcome in zip(context.cases, outcomes, strict=True) if outcome.hung or is_silent_stream(case, outcome)]
    status, detail = classify(outcomes, budget_exhausted=run.loop.budget_exhausted, silent=silent)
    name = run.adapter_name or submission.name
    return submission.result(status, detail, outcomes, name, isolation=run.isolation, notes=run.notes)


class _Run:
    """The cases of one submission, run phase by phase through one :class:`~conformance.running.engine.Loop`.

    Each phase runs with a fresh adapter.
    """

    def __init__(
        self,
        impl: Impl,
        settings: ImplSettings,
        context: GradingContext,
        options: GradeOptions,
        stop: threading.Event | None,
        given: Mapping[str, Outcome],
        on_outcome: Callable[[Outcome], None] | None,
    ) -> None:
        self.impl, self.settings, self.context = impl, settings, context
        self.outcomes: list[Outcome | None] = [None] * len(context.cases)
        #: Student text kept across the whole submission is bounded (studenttext.Budget).
        text_budget = Budget()

        def keep(case: Case, outcome: Outcome) -> Outcome:
            try:
                return bounded(outcome, text_budget)
            except Exception as error:  # a grader bug on this case's outcome costs this case, not the submission
                return grader_error(case.id, "handling the outcome", error)

        deadline = time.monotonic() + options.budget_s if options.budget_s else None
        policy = Policy(options.case_timeout_s, deadline, options.budget_s, stop, keep, given)
        recorded = (lambda outcome: _recorded(on_outcome, outcome)) if on_outcome is not None else None
        self.loop = Loop(policy, self._adapter, recorded)
        self.adapter_name: str | None = None
        self.isolation: str | None = None
        self.notes: tuple[str, ...] = ()

    def _adapter(self) -> Adapter:
        return self.impl.adapter(self.settings, self.context.rubric.profile)

    def phase(self, indexes: list[int], notes_wanted: bool) -> str | None:
        """Run the cases at ``indexes`` with one adapter, then retry those it gave up on; why it could not start, or None.

        ``notes_wanted``: keep the adapter's notes (the visible phase: nothing visible may come from held-out cases).
        """
        if not indexes:
            return None
        try:
            adapter = self._adapter()
        except ImplSpecError as error:
            message = " ".join(str(error).split())
        except Exception as error:  # an in-process implementation may fail anyhow while importing
            message = f"{type(error).__name__}: {' '.join(str(error).split())}"
        else:
            message = ""
        if message:
            for index in indexes:
                self.outcomes[index] = Outcome(self.context.cases[index].id, "errored", NOT_RUN + message, 0.0)
            return message
        self.isolation = self.impl.isolation_of(adapter)
        outcomes = self.loop.run(adapter, [self.context.cases[index] for index in indexes])
        self.adapter_name = self.adapter_name or adapter.name  # as its handshake named it
        stray = getattr(adapter, "stray_output", None)
        summary = stray.summary() if isinstance(stray, StrayOutput) else None
        if notes_wanted and summary is not None:
            self.notes = (summary,)
        for index, outcome in zip(indexes, outcomes, strict=True):
            self.outcomes[index] = outcome
        return None
