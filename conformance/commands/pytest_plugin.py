"""pytest integration: fixtures become pytest-cases cases, selectable by id, lab, chapter and clause.

Loaded by ``conformance/suite/conftest.py``; the ``pi-conformance`` CLI runs the same suite.
A session's state (:class:`RunState`) lives on its config's stash (:func:`state_of`); cases
run through the engine's policy (:func:`conformance.running.engine.run_one`), as ``grade`` runs them.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pytest_cases import case as case_decorator

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds import COURSE_CODE_KINDS, KINDS, Impl, ImplSpecError, default_impl, parse_impl
from conformance.adapters.settings import ImplSettings
from conformance.authoring.suspect import expectation_note
from conformance.commands.limit_options import add_limit_options_to_pytest
from conformance.commands.options import ENV, FIXTURES, SANDBOX, TIMEOUT, parse_env
from conformance.common.student_text import for_terminal, prune_json
from conformance.grading.baseline import Baseline, BaselineError, Verdict, baseline_document, compare, load_baseline, write_baseline
from conformance.judging.feedback import failure_report
from conformance.judging.outcome import Outcome
from conformance.loading.cases import LABS, BrokenCase, Case
from conformance.loading.loader import Suite, load_suite
from conformance.loading.selection import CHAPTERS, selection_problems
from conformance.reports.run_summary import CaseResult, group_lines, groups_of, skip_lines, summary_lines, write_json_report
from conformance.running.engine import Policy, run_one
from conformance.running.execution import all_divergences
from conformance.spec.clauses import Clause, load_profile_clauses
from conformance.spec.features import not_claimed_reason, unknown_feature_problem
from conformance.spec.profiles import DEFAULT_PROFILE, UnknownProfile, get_profile


def marker_name(kind: str, value: str) -> str:
    """The pytest marker for a lab, chapter or clause: ``lab_3_1``, ``chapter_03``, ``clause_IR_TEXT_1``."""
    return f"{kind}_{value.replace('.', '_').replace('-', '_')}"


@dataclass
class RunState:
    """Everything one pytest session of the suite shares."""

    impl: Impl = field(default_factory=lambda: parse_impl(default_impl(DEFAULT_PROFILE) or ""))
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
#: The ``--impl`` a caller parsed already (``run``): the session uses it instead of parsing the text again.
GIVEN_IMPL = pytest.StashKey[Impl]()
#: The configs of the sessions being collected: pytest-cases lists the cases when the suite's
#: test module is imported, and an import has no handle on its session (see :func:`case_functions`).
_collecting: list[pytest.Config] = []


def state_of(config: pytest.Config) -> RunState:
    """The suite's state of the pytest session ``config`` belongs to."""
    return config.stash[STATE_KEY]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pi-conformance")
    # Parsed here, once (an Impl from then on); ``run`` hands its own parsed value over instead (GIVEN_IMPL).
    forms = ", ".join(kind.usage for kind in KINDS)
    group.addoption("--impl", type=parse_impl, default=default_impl(DEFAULT_PROFILE), help=f"implementation under test ({forms})")
    group.addoption("--profile", default=DEFAULT_PROFILE, help="the profile to check: course (default), pi-ai-1 or pi-agent-core-1")
    FIXTURES.add_to_pytest(group)
    group.addoption(
        "--lab", action="append", default=[], help=f"run only this lab ({', '.join(LABS)}), or with --profile pi-ai-1 this area; repeatable"
    )
    group.addoption("--chapter", action="append", default=[], help=f"run only this chapter ({', '.join(CHAPTERS)}); repeatable")
    group.addoption("--clause", action="append", default=[], help="run only cases that check this clause id; repeatable")
    TIMEOUT.add_to_pytest(group)
    group.addoption("--report-json", default=None, help="write the JSON report to this file")
    ENV.add_to_pytest(group)
    add_limit_options_to_pytest(group)
    group.addoption("--build", action="store_true", default=False, help="build a pi-course project before checking it")
    SANDBOX.add_to_pytest(group)
    group.addoption(
        "--baseline", default=None, help="known failures (YAML/JSON); a listed case that fails is xfail, one that passes fails (stale)"
    )
    group.addoption("--write-baseline", default=None, help="write the cases that did not pass as a baseline file")
    group.addoption(
        "--all-divergences", action="store_true", default=False, help="list every divergence of a failing case, not only the first"
    )
    group.addoption(
        "--without-feature",
        action="append",
        default=[],
        metavar="NAME",
        help="do not claim this feature (spec/features.yaml): its cases are skipped, 'not claimed'; repeatable",
    )
    group.addoption(
        "--course-hints",
        action="store_true",
        default=False,
        help=f"show hints about the course's TypeScript code (always for {COURSE_CODE_KINDS})",
    )


def pytest_configure(config: pytest.Config) -> None:
    state = RunState()
    config.stash[STATE_KEY] = state
    _collecting.append(config)
    given = config.stash.get(GIVEN_IMPL, None)
    state.impl = given if given is not None else config.getoption("--impl")
    state.profile = config.getoption("--profile")
    try:
        profile = get_profile(state.profile)
    except UnknownProfile as error:
        raise pytest.UsageError(str(error)) from error
    fixtures = config.getoption("--fixtures-dir")
    state.fixtures = Path(fixtures) if fixtures else None
    state.timeout_s = config.getoption("--case-timeout")
    report = config.getoption("--report-json")
    state.report_json = Path(report) if report else None
    state.labs = config.getoption("--lab")
    state.chapters = [c.zfill(2) for c in config.getoption("--chapter")]
    state.clause_filter = config.getoption("--clause")
    state.impl_settings = ImplSettings(
        env=parse_env(config.getoption("--env")),
        cpu_limit_s=config.getoption("--cpu-limit"),
        memory_limit_mb=config.getoption("--memory-limit"),
        pids_limit=config.getoption("--pids-limit"),
        tmp_size_mb=config.getoption("--tmp-size"),
        limits=config.getoption("limits"),
        build=config.getoption("--build"),
        sandbox=config.getoption("--sandbox"),
    )
    state.clauses = load_profile_clauses(state.profile)
    unknown = selection_problems(state.labs, state.chapters, state.clause_filter, state.clauses, state.profile)
    if unknown:
        raise pytest.UsageError("\n".join(unknown))
    baseline = config.getoption("--baseline")
    try:
        state.baseline = load_baseline(Path(baseline)) if baseline else None
    except BaselineError as error:
        raise pytest.UsageError(str(error)) from error
    written = config.getoption("--write-baseline")
    state.write_baseline = Path(written) if written else None
    state.all_divergences = config.getoption("--all-divergences")
    without = config.getoption("--without-feature")
    unknown_features = unknown_feature_problem(without, (*profile.features, *profile.functions))
    if unknown_features:
        raise pytest.UsageError(unknown_features)
    state.without_features = frozenset(without)
    state.course_hints = config.getoption("--course-hints") or state.impl.kind.course_code
    for lab in LABS:
        config.addinivalue_line("markers", f"{marker_name('lab', lab)}: cases of lab {lab}")
    for feature in profile.features:
        config.addinivalue_line("markers", f"{marker_name('lab', feature)}: cases of the {profile.name} area {feature}")
    for chapter in CHAPTERS:
        config.addinivalue_line("markers", f"{marker_name('chapter', chapter)}: cases of chapter {chapter}")
    for clause_id in state.clauses:
        config.addinivalue_line("markers", f"{marker_name('clause', clause_id)}: cases that check {clause_id}")


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
    adapter.close()
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
    state.results.append(CaseResult(kept, entry.lab or "?", entry.chapter or "?", entry))
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
    if state.impl.is_reference(state.profile):
        # The reference passes every bundled case: the case is the first suspect, not the reference.
        message = f"[check the case] {expectation_note(entry, outcome, state.clauses, f'the reference ({state.impl.spec})')}\n{message}"
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
