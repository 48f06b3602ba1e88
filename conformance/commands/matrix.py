"""``pi-conformance matrix``: several implementations against the same cases, as a compliance matrix."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.adapters.resolve import IMPL_FORMS, ImplSpecError, resolve_adapter
from conformance.adapters.sandbox import add_sandbox_option
from conformance.adapters.settings import ImplSettings
from conformance.cases import Case
from conformance.clauses import load_profile_clauses
from conformance.commands.checks import EXIT_USAGE, output_folder_problem, positive_number
from conformance.execution import Outcome, run_case
from conformance.grading.grader import default_name
from conformance.html.matrix_site import ImplRun, write_matrix_site
from conformance.loader import load_suite
from conformance.profiles import DEFAULT_PROFILE


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``matrix`` to the command line."""
    matrix = commands.add_parser(
        "matrix",
        help="run several implementations and write a compliance matrix (implementations x clauses) as HTML",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="implementations (--impl):\n  " + "\n  ".join(IMPL_FORMS),
    )
    matrix.add_argument("--impl", action="append", required=True, help="an implementation; repeat for each column")
    matrix.add_argument("--html", required=True, metavar="DIR", help="where to write the site")
    matrix.add_argument("--profile", default=DEFAULT_PROFILE, help="the profile to check: course (default) or pi-ai-1")
    matrix.add_argument("--lab", action="append", default=[], help="only this lab (or area); repeatable")
    matrix.add_argument("--fixtures", help="fixtures folder (default: the bundled fixtures)")
    matrix.add_argument("--timeout", type=positive_number, help="per-operation timeout in seconds (default 1)")
    add_sandbox_option(matrix)
    matrix.set_defaults(handler=matrix_command)


def _run(impl: str, cases: list[Case], settings: ImplSettings, timeout: float | None, profile: str) -> tuple[str, list[Outcome]]:
    adapter = resolve_adapter(impl, settings)
    if hasattr(adapter, "requested_profile") and profile != DEFAULT_PROFILE:
        adapter.requested_profile = profile
    try:
        outcomes = [run_case(adapter, case, timeout) for case in cases]
    finally:
        try:
            adapter.close()
        except Exception:  # a failing close must not lose the run
            pass
    # Every student's pi-course package has the same name: its folder tells them apart.
    name = default_name(impl) if impl.startswith("pi-course:") else adapter.name or impl
    return name, outcomes


def matrix_command(args: argparse.Namespace) -> int:
    """Run every implementation and write the matrix; 0 when every implementation passed every case."""
    problem = output_folder_problem("--html", Path(args.html))
    if problem:
        print(f"pi-conformance matrix: {problem}", file=sys.stderr)
        return EXIT_USAGE
    clauses = load_profile_clauses(args.profile)
    suite = load_suite(Path(args.fixtures) if args.fixtures else None, clauses, args.profile)
    cases = [case for case in suite.cases if not args.lab or case.lab in args.lab]
    if not cases:
        print("pi-conformance matrix: no case matches the selection", file=sys.stderr)
        return 5
    settings = ImplSettings(sandbox=args.sandbox)
    runs: list[ImplRun] = []
    names: set[str] = set()
    for impl in args.impl:
        try:
            name, outcomes = _run(impl, cases, settings, args.timeout, args.profile)
        except ImplSpecError as error:
            print(f"pi-conformance matrix: {impl}: {error}", file=sys.stderr)
            return EXIT_USAGE
        if name in names:
            name = impl if impl not in names else f"{impl} ({len(runs) + 1})"
        names.add(name)
        runs.append(ImplRun(name, outcomes))
        passed = sum(outcome.status == "passed" for outcome in outcomes)
        print(f"  {name}: {passed}/{len(outcomes)} passed")
    stats = write_matrix_site(Path(args.html), cases, runs, clauses)
    print(f"pi-conformance matrix: {stats.line()}")
    return 0 if all(outcome.status == "passed" for run in runs for outcome in run.outcomes) else 1
