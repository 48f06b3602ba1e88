"""pytest integration: fixtures become pytest-cases cases, selectable by id, lab, chapter and clause.

Loaded by ``conformance/suite/conftest.py``; the ``pi-conformance`` CLI runs the same suite.
A session's state (:class:`RunState`) lives on its config's stash (:func:`state_of`); cases
run through the engine's policy (:func:`conformance.running.engine.run_one`), as ``grade`` runs them.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pytest_cases import case as case_decorator

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds import Impl, ImplSpecError, default_impl
from conformance.adapters.settings import ImplSettings
from conformance.authoring.suspect import CheckTheCase
from conformance.commands.options import process_settings
from conformance.commands.run_options import REFERENCE, RUN_OPTIONS, add_run_options_to_pytest, run_values
from conformance.common.student_text import for_terminal, prune_json
from conformance.feedback.failure_report import failure_report
from conformance.grading.baseline import Baseline, BaselineError, Verdict, baseline_document, compare, load_baseline, write_baseline
from conformance.judging.divergences import all_divergences
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite, load_suite
from conformance.loading.selection import CHAPTERS, selection_problems
from conformance.model.cases import LABS, BrokenCase, Case
from conformance.model.clauses import Clause, load_profile_clauses
from conformance.model.features import not_claimed_reason, unknown_feature_problem
from conformance.model.profiles import DEFAULT_PROFILE, UnknownProfile, get_profile
from conformance.reports.run_summary import CaseResult, group_lines, groups_of, skip_lines, summary_lines, write_json_report
from conformance.running.engine import Policy, close, run_one


def marker_name(kind: str, value: str) -> str:
    """The pytest marker for a lab, chapter or clause: ``lab_3_1``, ``chapter_03``, ``clause_IR_TEXT_1``."""
    return f"{kind}_{value.replace('.', '_').replace('-', '_')}"


@dataclass
class RunState:
    """Everything one pytest session of the suite shares."""

    impl: Impl = REFERENCE
    profile: str = DEFAULT_PROFILE
    fixtures: Path | None = None
    timeout_s: float | None = None
    report_json: Path | None = None
    impl_settings: ImplSettings = field(default_factory=ImplSettings)
    labs: list[str] = field(default_factory=list)
    chapters: list[str] = field(default_factory=list)
    clause_filter: list[str] = field(default_factory=list)
    clauses: dict[str, Clause] = field(default_factory=dict)
    suite: Suite | None = None
    adapter: Adapter | None = None
    results: list[CaseResult] = field(default_factory=list)
    baseline: Baseline | None = None
    write_baseline: Path | None = None
    all_divergences: bool = False
    #: Features not claimed (``--without-feature``): their cases are skipped, counted apart.
    without_features: frozenset[str] = frozenset()
    #: Show hints written for the course's TypeScript code (``--course-hints``; always for pi-course:).
    course_hints: bool = True
    #: Why ``--impl`` names no usable implementation (set when starting it failed; the run is a usage error).
    impl_error: str | None = None
    #: Whether a failing case may be wrong itself (``--reference``), and what was found, by case id.
    check_the_case: CheckTheCase = field(default_factory=lambda: CheckTheCase({}))
    case_notes: dict[str, str | None] = field(default_factory=dict)

    #: What to do when the session ends (remove the copy ``--build`` built).
    cleanups: list[Callable[[], None]] = field(default_factory=list)

    def get_adapter(self) -> Adapter:
        if self.adapter is None:
            self._build_once()
            self.adapter = self.fresh_adapter()
        return self.adapter

    def _build_once(self) -> None:
        """``--build``: build before the first case, once, so that every adapter (retries too) runs the built copy, as grading does."""
        built = self.impl.build(self.impl_settings) if self.impl_settings.build else None
        if built is None:
            return
        if built.report is not None:
            built.remove()
            return  # starting the adapter builds again and reports the failure as it always has
        self.cleanups.append(built.remove)
        self.impl = self.impl.at(built.target)
        self.impl_settings = dataclasses.replace(self.impl_settings, build=False)

    def fresh_adapter(self) -> Adapter:
        """A new adapter of ``--impl`` (the session's, or one a given-up case is retried in)."""
        return self.impl.adapter(self.impl_settings, self.profile)

    def get_suite(self) -> Suite:
        if self.suite is None:
            self.suite = load_suite(self.fixtures, self.clauses, self.profile)
            gc.freeze()  # the loaded cases live as long as the session: keep them out of the collector's passes
        return self.suite


STATE_KEY = pytest.StashKey[RunState]()
#: The option values a caller parsed already (``run``, by :func:`.run_options.run_values`): the session uses them
#: instead of what pytest parsed, so no text is parsed twice.
GIVEN_VALUES = pytest.StashKey[dict[str, Any]]()
#: The configs of the sessions being collected: pytest-cases lists the cases when the suite's
#: test module is imported, and an import has no handle on its session (see :func:`case_functions`).
_collecting: list[pytest.Config] = []


def state_of(config: pytest.Config) -> RunState:
    """The suite's state of the pytest session ``config`` belongs to."""
    return config.stash[STATE_KEY]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_run_options_to_pytest(parser.getgroup("pi-conformance"))


def pytest_configure(config: pytest.Config) -> None:
    state = RunState()
    config.stash[STATE_KEY] = state
    _collecting.append(config)
    given = config.stash.get(GIVEN_VALUES, None)
    # ``run`` hands its own parsed values over; else pytest parsed the same table (under the same dests).
    values = given if given is not None else run_values({option.dest: config.getoption(option.dest) for option in RUN_OPTIONS})
    _configure(state, values)
    for lab in LABS:
        config.addinivalue_line("markers", f"{marker_name('lab', lab)}: cases of lab {lab}")
    for feature in get_profile(state.profile).features:
        config.addinivalue_line("markers", f"{marker_name('lab', feature)}: cases of the {state.profile} area {feature}")
    for chapter in CHAPTERS:
        config.addinivalue_line("markers", f"{marker_name('chapter', chapter)}: cases of chapter {chapter}")
    for clause_id in state.clauses:
        config.addinivalue_line("markers", f"{marker_name('clause', clause_id)}: cases that check {clause_id}")


def _configure(state: RunState, values: dict[str, Any]) -> None:
    """``state`` from the run's option values (:mod:`.run_options`); :class:`pytest.UsageError` for a bad one."""
    state.impl, state.profile = values["impl"], values["profile"]
    try:
        profile = get_profile(state.profile)
    except UnknownProfile as error:
        raise pytest.UsageError(str(error)) from error
    state.fixtures = Path(values["fixtures"]) if values["fixtures"] else None
    state.timeout_s = values["timeout"]
    state.report_json = Path(values["report_json"]) if values["report_json"] else None
    state.labs, state.chapters = values["lab"], [chapter.zfill(2) for chapter in values["chapter"]]
    state.clause_filter = values["clause"]
    state.impl_settings = process_settings(argparse.Namespace(**values), build=values["build"])
    state.clauses = load_profile_clauses(state.profile)
    unknown = selection_problems(state.labs, state.chapters, state.clause_filter, state.clauses, state.profile)
    if unknown:
        raise pytest.UsageError("\n".join(unknown))
    try:
        state.baseline = load_baseline(Path(values["baseline"])) if values["baseline"] else None
    except BaselineError as error:
        raise pytest.UsageError(str(error)) from error
    state.write_baseline = Path(values["write_baseline"]) if values["write_baseline"] else None
    state.all_divergences = values["all_divergences"]
    without = values["without_feature"]
    unknown_features = unknown_feature_problem(without, profile.opt_outs)
    if unknown_features:
        raise pytest.UsageError(unknown_features)
    state.without_features = frozenset(without)
    state.course_hints = values["course_hints"] or state.impl.kind.course_code
    state.check_the_case = _check_the_case(state, values["reference_alongside"])
    state.cleanups.append(state.check_the_case.close)


def _check_the_case(state: RunState, given: Impl | None) -> CheckTheCase:
    """Who can say a failing case may be wrong: ``--impl`` when it is the profile's reference, else the reference run alongside.

    Without ``--reference``, the bundled reference of the profile (the course's) runs alongside; a
    profile without one (pi-ai-1: upstream is not bundled) marks no case unless given one.
    """
    if state.impl.is_reference(state.profile):
        return CheckTheCase(state.clauses, under_test=state.impl.spec)
    reference = given or default_impl(state.profile)
    if reference is None:
        return CheckTheCase(state.clauses)
    if not reference.is_reference(state.profile):
        raise pytest.UsageError(f"--reference {reference.spec} is not the {state.profile} profile's reference{_whose(state.profile)}")
    settings = dataclasses.replace(state.impl_settings, build=False)

    def fresh() -> Adapter:
        return reference.adapter(settings, state.profile)

    return CheckTheCase(state.clauses, alongside=(reference.spec, fresh), timeout_s=state.timeout_s)


def _whose(profile: str) -> str:
    """What the profile's reference is, when it is a published package: `` (NAME at VERSION)``."""
    package = get_profile(profile).reference_package
    return f" (upstream {package[0]} at {package[1]})" if package is not None else ""


def pytest_unconfigure(config: pytest.Config) -> None:
    if config in _collecting:
        _collecting.remove(config)
    state = config.stash.get(STATE_KEY, None)
    while state is not None and state.cleanups:
        state.cleanups.pop()()


def case_functions() -> list[Callable[[], Case | BrokenCase]]:
    """One pytest-cases case function per fixture case (broken ones included, to be reported).

    Called while the suite's test module is imported, for the session being configured.
    """
    suite = state_of(_collecting[-1]).get_suite()
    return [_case_function(entry) for entry in _entries(suite)]


def _entries(suite: Suite) -> list[Case | BrokenCase]:
    return [*suite.cases, *suite.broken]


def case_parameters() -> list[Any]:
    """The same cases as plain ``pytest.param`` values: what the suite would be without pytest-cases.

    Not used by the suite; ``bench/suite_overhead.py`` times it next to :func:`case_functions`,
    which is how pytest-cases' own cost is measured.
    """
    return [pytest.param(entry, id=entry.id, marks=_marks(entry)) for entry in _entries(state_of(_collecting[-1]).get_suite())]


def _marks(entry: Case | BrokenCase) -> list[Any]:
    marks: list[Any] = []
    if entry.lab:
        marks.append(getattr(pytest.mark, marker_name("lab", entry.lab)))
    if entry.chapter:
        marks.append(getattr(pytest.mark, marker_name("chapter", entry.chapter)))
    clause_ids = entry.clauses if isinstance(entry, Case) else ()
    marks.extend(getattr(pytest.mark, marker_name("clause", clause_id)) for clause_id in clause_ids)
    return marks


def _case_function(entry: Case | BrokenCase) -> Callable[[], Case | BrokenCase]:
    @case_decorator(id=entry.id, marks=_marks(entry))
    def fixture_case() -> Case | BrokenCase:
        return entry

    return fixture_case


def _selected(state: RunState, entry: Case | BrokenCase) -> bool:
    if entry.profile != state.profile:
        return False
    if state.labs and entry.lab not in state.labs:
        return False
    if state.chapters and entry.chapter not in state.chapters:
        return False
    clause_ids = entry.clauses if isinstance(entry, Case) else ()
    return not state.clause_filter or any(clause in clause_ids for clause in state.clause_filter)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = state_of(config)
    if not (state.labs or state.chapters or state.clause_filter or state.profile != DEFAULT_PROFILE):
        return
    by_id = {entry.id: entry for entry in _entries(state.get_suite())}
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        entry = by_id.get(callspec.id) if callspec is not None else None
        (drop if entry is not None and not _selected(state, entry) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Start ``--impl`` before the first case runs, so that an unusable one is a usage error.

    pytest prints a usage error as one line (``ERROR: ...``) and exits with status 4;
    ``pytest.exit`` from the fixture would show ``_pytest.outcomes.Exit: ...`` instead.
    Nothing starts when no selected test runs a case (collection only, or none selected).
    """
    if session.config.option.collectonly or not any("conformance_adapter" in getattr(item, "fixturenames", ()) for item in session.items):
        return
    state = state_of(session.config)
    try:
        state.get_adapter()
    except ImplSpecError as error:
        state.impl_error = str(error)
        raise pytest.UsageError(f"pi-conformance: {error}") from None


@pytest.fixture(scope="session")
def conformance_state(request: pytest.FixtureRequest) -> RunState:
    """The session's state (:class:`RunState`)."""
    return state_of(request.config)


@pytest.fixture(scope="session")
def conformance_adapter(conformance_state: RunState) -> Iterator[Adapter]:
    """The adapter for ``--impl``, shared by every case of the session (started by :func:`pytest_runtestloop`)."""
    adapter = conformance_state.get_adapter()
    yield adapter
    close(adapter)  # its failure, an exit its code raises included, loses no outcome
    while conformance_state.cleanups:
        conformance_state.cleanups.pop()()


def check_case(entry: Case | BrokenCase, adapter: Adapter, state: RunState) -> None:
    """Run one case and turn its outcome into a pytest result."""
    unclaimed = not_claimed_reason(entry.features, state.without_features) if isinstance(entry, Case) else None
    policy = Policy(timeout_s=state.timeout_s)
    outcome = Outcome(entry.id, "skipped", unclaimed, 0.0) if unclaimed else run_one(adapter, entry, state.fresh_adapter, policy)
    # Only failures are reported; their observations are kept pruned (a megabyte answer per case adds up).
    observation = prune_json(outcome.observation)[0] if outcome.observation is not None and outcome.status != "passed" else None
    kept = dataclasses.replace(outcome, observation=observation)
    if isinstance(entry, Case) and outcome.status in ("failed", "errored"):
        state.case_notes[entry.id] = state.check_the_case.note(entry, kept)
    state.results.append(CaseResult(kept, entry.lab or "?", entry.chapter or "?", entry, state.case_notes.get(entry.id)))
    baseline = state.baseline
    known = baseline.cases.get(entry.id) if baseline is not None else None
    if outcome.status == "passed":
        if baseline is not None and known is not None:
            pytest.fail(f"[stale baseline] {entry.id} passes now; remove it from {baseline.source}", pytrace=False)
        return
    if known is not None:
        pytest.xfail(f"in the baseline: {known}")
    # pytest prints these: no escape sequence of the implementation's reaches the terminal.
    if outcome.status == "skipped":
        pytest.skip(for_terminal(outcome.message))
    pytest.fail(for_terminal(f"[{outcome.status}] {_example(state, entry, kept)}"), pytrace=False)


def _example(state: RunState, entry: Case | BrokenCase, outcome: Outcome) -> str:
    """The full feedback for a failing case (with every divergence under ``--all-divergences``)."""
    if not isinstance(entry, Case):
        return outcome.message
    message = failure_report(entry, outcome, state.clauses, course_hints=state.course_hints)
    note = state.case_notes.get(entry.id)
    if note is not None:
        # The reference fails it too: the case is the first suspect, not the implementation.
        message = f"[check the case] {note}\n{message}"
    if state.all_divergences and outcome.observation is not None and outcome.divergence is not None:
        every = all_divergences(entry, outcome.observation)
        message += f"\n  all {len(every)} divergences:" + "".join(f"\n    {divergence}" for divergence in every)
    return message


def pytest_terminal_summary(terminalreporter: Any) -> None:
    state = state_of(terminalreporter.config)
    if not state.results:
        return
    terminalreporter.write_line("")
    name = state.adapter.name if state.adapter else state.impl.spec
    lines = summary_lines(state.results, name, state.profile)
    lines += group_lines(groups_of(state.results, state.clauses), lambda entry, outcome: _example(state, entry, outcome))
    lines += skip_lines(state.results)
    for line in lines:
        terminalreporter.write_line(for_terminal(line))
    if state.report_json is not None:
        write_json_report(state.report_json, state.results, state.clauses, state.all_divergences, state.profile)
        terminalreporter.write_line(f"  report written to {state.report_json}")
    if state.baseline is not None:
        for line in baseline_verdict(state).lines(state.baseline.source):
            terminalreporter.write_line(line)
    if state.write_baseline is not None:
        outcomes = [(result.outcome.case_id, result.outcome.status, result.outcome.message) for result in state.results]
        write_baseline(state.write_baseline, baseline_document(outcomes, state.baseline, name))
        terminalreporter.write_line(f"  baseline written to {state.write_baseline}")


def baseline_verdict(state: RunState) -> Verdict:
    """How a session's results compare with ``--baseline``."""
    assert state.baseline is not None
    known_ids = [entry.id for entry in _entries(state.get_suite())]
    return compare(state.baseline, [(result.outcome.case_id, result.outcome.status) for result in state.results], known_ids)
