"""``pi-conformance run``: the suite against one implementation, through pytest."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.adapters.kinds import (
    BUILT_KINDS,
    COURSE_CODE_KINDS,
    IMPL_FORMS,
    PROCESS_GROUP,
    Impl,
    ImplSpecError,
    default_impl,
    parse_impl,
)
from conformance.commands.checks import EXIT_USAGE, output_file_problem, same_file_problem
from conformance.commands.limit_options import limit_arguments
from conformance.commands.options import ENV, FIXTURES, SANDBOX, TIMEOUT, add_process_options
from conformance.spec.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:
    from conformance.commands.pytest_plugin import RunState
    from conformance.reports.html.class_site import SiteStats

#: ``--impl`` when none is given: the course's bundled reference.
REFERENCE = default_impl(DEFAULT_PROFILE) or ""
SUITE_DIR = Path(__file__).resolve().parent.parent / "suite"
EXIT_NO_CASES = 5


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run`` to the command line."""
    run = commands.add_parser(
        "run",
        help="run the conformance suite against an implementation",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="implementations (--impl):\n  " + "\n  ".join(IMPL_FORMS),
    )
    run.add_argument("--impl", type=parse_impl, default=REFERENCE, help=f"the implementation under test (default: {REFERENCE})")
    run.add_argument(
        "--profile",
        default="course",
        help="the profile to check: course (default), pi-ai-1 or pi-agent-core-1 (upstream pi-ai, pi-agent-core 1.x)",
    )
    run.add_argument("-k", dest="keyword", help="select cases by pytest keyword expression (ids, lab_3_1, clause_SM_ABORT_1, ...)")
    run.add_argument("--lab", action="append", default=[], help="run only this lab (with --profile pi-ai-1: this area); repeatable")
    run.add_argument("--chapter", action="append", default=[], help="run only this chapter (03, 04); repeatable")
    run.add_argument("--clause", action="append", default=[], help="run only cases checking this clause; repeatable")
    FIXTURES.add(run)
    TIMEOUT.add(run)
    run.add_argument("--report-json", help="write a JSON report to this file")
    run.add_argument("--html", metavar="DIR", help="write a static HTML report: failures by cause, each with its trace diff")
    run.add_argument("-v", "--verbose", action="store_true", help="list every case, with the full feedback of every failing one")
    run.add_argument("--all-divergences", action="store_true", help="list every divergence of a failing case, not only the first")
    run.add_argument(
        "--without-feature",
        action="append",
        default=[],
        metavar="NAME",
        help="do not claim this feature (spec/features.yaml): its cases are skipped, counted as 'not claimed'; repeatable",
    )
    run.add_argument(
        "--course-hints", action="store_true", help=f"show hints about the course's TypeScript code ({COURSE_CODE_KINDS} always does)"
    )
    run.add_argument(
        "--baseline", metavar="FILE", help="known failures (YAML/JSON, case id -> reason); exit 1 on an unexpected failure or a stale entry"
    )
    run.add_argument(
        "--write-baseline", metavar="FILE", help="write the cases that did not pass as a baseline (reasons kept from --baseline)"
    )
    process = run.add_argument_group(PROCESS_GROUP)
    add_process_options(process)
    process.add_argument(
        "--build",
        action="store_true",
        help=f"{BUILT_KINDS} build the project first (the course's package.json and tsconfig.json pinned, the pinned tsc; offline)",
    )
    run.set_defaults(handler=run_command)


def pytest_arguments(args: argparse.Namespace) -> list[str]:
    """The pytest command line that runs the suite as ``args`` asks."""
    # No --impl: the session is handed the parsed value (_Session), never its text to parse again.
    argv = [str(SUITE_DIR), "-p", "no:cacheprovider", "-rN"]
    # The suite has no assert statements to rewrite, and needs no Hypothesis: without them pytest
    # neither rewrites (and, without a bytecode cache, recompiles) pytest-cases nor imports Hypothesis.
    argv += ["--assert=plain", "-p", "no:hypothesispytest"]
    # Without -v, failures are printed once per cause (the summary's failure groups), not once per case.
    argv += ["-v"] if args.verbose else ["-q", "--tb=no"]
    return argv + _selection_arguments(args) + _run_arguments(args)


def _selection_arguments(args: argparse.Namespace) -> list[str]:
    """The suite plugin's options for which cases run, and what a failure shows."""
    argv: list[str] = []
    if args.all_divergences:
        argv.append("--all-divergences")
    for name in args.without_feature:
        argv += ["--without-feature", name]
    if args.course_hints:
        argv.append("--course-hints")
    if args.profile != "course":
        argv += ["--profile", args.profile]
    if args.keyword:
        argv += ["-k", args.keyword]
    for option, values in (("--lab", args.lab), ("--chapter", args.chapter), ("--clause", args.clause)):
        for value in values:
            argv += [option, value]
    return argv


def _run_arguments(args: argparse.Namespace) -> list[str]:
    """The suite plugin's options for the fixtures, the implementation's process, the report and the baseline."""
    argv = FIXTURES.forward(args) + TIMEOUT.forward(args)
    if args.report_json:
        argv += ["--report-json", args.report_json]
    argv += ENV.forward(args) + limit_arguments(args)
    if args.build:
        argv.append("--build")
    argv += SANDBOX.forward(args)
    if args.baseline:
        argv += ["--baseline", args.baseline]
    if args.write_baseline:
        argv += ["--write-baseline", args.write_baseline]
    return argv


def run_command(args: argparse.Namespace) -> int:
    """Run the suite; 0 exactly when every selected case passed (with --baseline: when the baseline holds)."""
    problem = _usage_problem(args)
    if problem:
        print(f"pi-conformance run: {problem}", file=sys.stderr)
        return EXIT_USAGE
    impl: Impl = args.impl
    problem = _impl_problem(impl, args.build)
    if problem:
        print(f"pi-conformance run: {problem}", file=sys.stderr)
        return EXIT_USAGE
    session = _Session(impl)
    code = pytest.main(pytest_arguments(args), plugins=[session])
    # Imported after pytest has started, so that pytest-cases is loaded (and rewritten) by pytest.
    from conformance.commands.pytest_plugin import baseline_verdict
    from conformance.spec.features import is_not_claimed

    state = session.state
    if state is None:  # pytest stopped before configuring the suite (a bad option): it said why
        return int(code)
    if state.impl_error is not None:
        # pytest has printed it as one line (the plugin's usage error); an unusable --impl is this command's usage error.
        return EXIT_USAGE
    if code in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.INTERRUPTED):
        return int(code)
    if not state.results:
        print("pi-conformance: no case matches the selection", file=sys.stderr)
        return EXIT_NO_CASES
    if args.html:
        print(f"pi-conformance: html report: {_write_html(Path(args.html), state, impl.spec).line()}")
    if state.baseline is not None:
        # Known failures are fine; a regression or a case that now passes (stale) is not.
        return 0 if baseline_verdict(state).holds else 1
    # A case whose feature is not claimed is neither a pass nor a failure: it does not fail the run.
    return 0 if all(result.outcome.status == "passed" or is_not_claimed(result.outcome.message) for result in state.results) else 1


def _write_html(folder: Path, state: RunState, impl: str) -> SiteStats:
    """``--html``: the run's site, named after the implementation, its cases grouped by lab (or the profile's area)."""
    from conformance.reports.html.run_site import RunPage, write_run_site
    from conformance.spec.profiles import get_profile

    pairs = [(result.case, result.outcome) for result in state.results if result.case is not None]
    name = state.adapter.name if state.adapter is not None and state.adapter.name else impl
    return write_run_site(folder, RunPage(name, pairs, state.clauses, get_profile(state.profile).group_label))


class _Session:
    """A pytest plugin that keeps the suite's state of the session it joins, for after ``pytest.main``."""

    def __init__(self, impl: Impl) -> None:
        self.impl = impl
        self.state: RunState | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        from conformance.commands.pytest_plugin import GIVEN_IMPL

        config.stash[GIVEN_IMPL] = self.impl  # before the suite's own pytest_configure reads --impl

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        from conformance.commands.pytest_plugin import STATE_KEY

        self.state = config.stash.get(STATE_KEY, None)


def _impl_problem(impl: Impl, build: bool) -> str | None:
    """Why ``--impl`` cannot run, found before pytest starts (so it reads as this command's own line)."""
    unbuilt = None if build else impl.unbuilt_problem()
    if unbuilt or not impl.kind.imports_code:
        return unbuilt
    try:
        impl.adapter().close()
    except ImplSpecError as error:
        return str(error)
    return None


def _usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the output files or the baseline, found before any case runs."""
    return _output_files_problem(args) or _feature_problem(args) or _html_problem(args) or _baseline_problem(args)


def _output_files_problem(args: argparse.Namespace) -> str | None:
    targets = [("--report-json", args.report_json), ("--write-baseline", args.write_baseline)]
    for option, target in targets:
        problem = output_file_problem(option, Path(target)) if target else None
        if problem:
            return problem
    return same_file_problem(targets)


def _feature_problem(args: argparse.Namespace) -> str | None:
    """A ``--without-feature`` that names no feature of the profile."""
    if not args.without_feature:
        return None
    from conformance.spec.features import unknown_feature_problem
    from conformance.spec.profiles import UnknownProfile, get_profile

    try:
        chosen = get_profile(args.profile)
        areas = (*chosen.features, *chosen.functions)
    except UnknownProfile:
        areas = ()
    return unknown_feature_problem(args.without_feature, areas)


def _html_problem(args: argparse.Namespace) -> str | None:
    if not args.html:
        return None
    from conformance.commands.checks import output_folder_problem

    return output_folder_problem("--html", Path(args.html))


def _baseline_problem(args: argparse.Namespace) -> str | None:
    if not args.baseline:
        return None
    from conformance.grading.baseline import BaselineError, load_baseline

    try:
        load_baseline(Path(args.baseline))
    except BaselineError as error:
        return str(error)
    return None
