"""``pi-conformance run``: the suite against one implementation, through pytest."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.adapters.kinds import IMPL_FORMS, Impl, ImplSpecError
from conformance.commands.checks import EXIT_USAGE, output_file_problem, same_file_problem
from conformance.commands.run_options import add_run_options, run_values

if TYPE_CHECKING:
    from conformance.commands.pytest_plugin import RunState
    from conformance.reports.html.class_site import SiteStats

__all__ = ["pytest_arguments", "register", "run_command"]

SUITE_DIR = Path(__file__).resolve().parent.parent / "suite"
EXIT_NO_CASES = 5


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run`` to the command line: its table (:mod:`.run_options`), and what only ``run`` has."""
    run = commands.add_parser(
        "run",
        help="run the conformance suite against an implementation",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="implementations (--impl):\n  " + "\n  ".join(IMPL_FORMS),
    )
    add_run_options(run, _own_options)
    run.set_defaults(handler=run_command)


def _own_options(run: argparse.ArgumentParser) -> None:
    """What only ``run`` has: pytest's own ``-k`` and ``-v``, and ``--html``, written after pytest returns."""
    run.add_argument("-k", dest="keyword", help="select cases by pytest keyword expression (ids, lab_3_1, clause_SM_ABORT_1, ...)")
    run.add_argument("--html", metavar="DIR", help="write a static HTML report: failures by cause, each with its trace diff")
    run.add_argument("-v", "--verbose", action="store_true", help="list every case, with the full feedback of every failing one")


def pytest_arguments(args: argparse.Namespace) -> list[str]:
    """The pytest command line that runs the suite as ``args`` asks: pytest's own options only.

    The suite's options are not on it: ``run`` hands their parsed values to the session
    (:class:`_Session`), so nothing is parsed twice and no option needs a second spelling.
    """
    argv = [str(SUITE_DIR), "-p", "no:cacheprovider", "-rN"]
    # The suite has no assert statements to rewrite, and needs no Hypothesis: without them pytest
    # neither rewrites (and, without a bytecode cache, recompiles) pytest-cases nor imports Hypothesis.
    argv += ["--assert=plain", "-p", "no:hypothesispytest"]
    # Without -v, failures are printed once per cause (the summary's failure groups), not once per case.
    argv += ["-v"] if args.verbose else ["-q", "--tb=no"]
    return argv + (["-k", args.keyword] if args.keyword else [])


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
    session = _Session(run_values(args))
    code = pytest.main(pytest_arguments(args), plugins=[session])
    # Imported after pytest has started, so that pytest-cases is loaded (and rewritten) by pytest.
    from conformance.commands.pytest_plugin import baseline_verdict
    from conformance.model.features import is_not_claimed

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
    from conformance.model.profiles import get_profile
    from conformance.reports.html.run_site import RunPage, write_run_site

    pairs = [(result.case, result.outcome) for result in state.results if result.case is not None]
    name = state.adapter.name if state.adapter is not None and state.adapter.name else impl
    return write_run_site(folder, RunPage(name, pairs, state.clauses, get_profile(state.profile).group_label))


class _Session:
    """A pytest plugin that hands ``run``'s parsed options to the session it joins, and keeps its state for after ``pytest.main``."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values
        self.state: RunState | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        from conformance.commands.pytest_plugin import GIVEN_VALUES

        config.stash[GIVEN_VALUES] = self.values  # before the suite's own pytest_configure reads its options

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
    from conformance.model.features import unknown_feature_problem
    from conformance.model.profiles import UnknownProfile, get_profile

    try:
        chosen = get_profile(args.profile)
        areas = chosen.opt_outs
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
