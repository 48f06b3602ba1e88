"""``pi-conformance matrix``: several implementations against the same cases, as a compliance matrix."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.adapters.kinds import IMPL_FORMS, PROCESS_GROUP, Impl, ImplSpecError, parse_impl, submission_impl
from conformance.adapters.settings import ImplSettings
from conformance.commands.checks import EXIT_USAGE, output_folder_problem
from conformance.commands.options import FIXTURES, TIMEOUT, add_process_options, process_settings
from conformance.judging.outcome import Outcome
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.model.clauses import load_profile_clauses
from conformance.model.profiles import DEFAULT_PROFILE
from conformance.reports.compat_targets import COMPAT_TARGETS
from conformance.reports.html.matrix_site import ImplRun, write_matrix_site
from conformance.running.engine import Loop, Policy


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``matrix`` to the command line."""
    matrix = commands.add_parser(
        "matrix",
        help="run several implementations and write a compliance matrix (implementations x clauses) as HTML",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="implementations (--impl):\n  " + "\n  ".join(IMPL_FORMS),
    )
    matrix.add_argument("--impl", type=parse_impl, action="append", required=True, help="an implementation; repeat for each column")
    matrix.add_argument("--html", required=True, metavar="DIR", help="where to write the site")
    matrix.add_argument("--profile", default=DEFAULT_PROFILE, help="the profile to check: course (default), pi-ai-1 or pi-agent-core-1")
    matrix.add_argument("--lab", action="append", default=[], help="only this lab (or area); repeatable")
    FIXTURES.add(matrix)
    TIMEOUT.add(matrix)
    add_process_options(matrix.add_argument_group(PROCESS_GROUP))
    matrix.set_defaults(handler=matrix_command)

    compat = commands.add_parser(
        "compat",
        help="install published upstream versions (pi-ai 1.x, or pi-agent-core from 0.85.0), run the profile's cases on each, "
        "write the compatibility page",
    )
    compat.add_argument(
        "--profile",
        default="pi-ai-1",
        choices=sorted(COMPAT_TARGETS),
        help="the profile whose upstream package is checked (default: pi-ai-1; pi-agent-core-1: @earendil-works/pi-agent-core)",
    )
    compat.add_argument(
        "--version",
        action="append",
        default=[],
        dest="versions",
        help="a version to check; repeatable (default: every published one in range)",
    )
    compat.add_argument("--package", help="the npm package (default: the profile's, e.g. @earendil-works/pi-ai)")
    compat.add_argument("--cache", default=".cache", metavar="DIR", help="where versions are installed, once each (default: .cache)")
    compat.add_argument(
        "--out", metavar="FILE", help="the page to write (default: docs/pi-ai-compatibility.md, docs/pi-agent-core-compatibility.md)"
    )
    compat.add_argument("--html", metavar="DIR", help="also write the compliance matrix (versions x clauses) as HTML here")
    TIMEOUT.add(compat)
    add_process_options(compat.add_argument_group(PROCESS_GROUP))
    compat.set_defaults(handler=compat_command)


def run_implementation(
    impl: Impl, cases: list[Case], settings: ImplSettings, timeout: float | None, profile: str
) -> tuple[str, list[Outcome]]:
    """Every case on ``impl``, by the engine's one policy (as ``run`` and ``grade`` run them)."""
    adapter = impl.adapter(settings, profile)
    outcomes = Loop(Policy(timeout_s=timeout), lambda: impl.adapter(settings, profile)).run(adapter, cases)
    return impl.column_name(adapter), outcomes


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
    settings = process_settings(args)
    runs: list[ImplRun] = []
    names: set[str] = set()
    for impl in args.impl:
        try:
            name, outcomes = run_implementation(impl, cases, settings, args.timeout, args.profile)
        except ImplSpecError as error:
            print(f"pi-conformance matrix: {impl}: {error}", file=sys.stderr)
            return EXIT_USAGE
        if name in names:
            name = impl.spec if impl.spec not in names else f"{impl.spec} ({len(runs) + 1})"
        names.add(name)
        runs.append(ImplRun(name, outcomes))
        passed = sum(outcome.status == "passed" for outcome in outcomes)
        print(f"  {name}: {passed}/{len(outcomes)} passed")
    stats = write_matrix_site(Path(args.html), cases, runs, clauses)
    print(f"pi-conformance matrix: {stats.line()}")
    return 0 if all(outcome.status == "passed" for run in runs for outcome in run.outcomes) else 1


def compat_command(args: argparse.Namespace) -> int:
    """Install each version, run the profile's cases on it, write the page (and the matrix); 0 when written."""
    from conformance.model.profiles import PROFILES
    from conformance.reports.compat_page import CompatUnavailable, VersionRun, install, published_versions, version_key, write_page

    target = COMPAT_TARGETS[args.profile]
    profile = PROFILES[target.profile]
    package = args.package or target.package
    out = Path(args.out or target.out)
    if args.html:
        problem = output_folder_problem("--html", Path(args.html))
        if problem:
            print(f"pi-conformance compat: {problem}", file=sys.stderr)
            return EXIT_USAGE
    try:
        versions = sorted(set(args.versions), key=version_key) if args.versions else published_versions(package, target.since)
        companions = target.companions if package == target.package else ()
        prefixes = {version: install(version, Path(args.cache), package, companions) for version in versions}
    except CompatUnavailable as error:
        print(f"pi-conformance compat: {error}", file=sys.stderr)
        return 3
    if not versions:
        print(f"pi-conformance compat: {package} has no published version {target.versions_in_words}", file=sys.stderr)
        return 3
    clauses = load_profile_clauses(profile.name)
    cases = load_suite(None, clauses, profile.name).cases
    settings = process_settings(args)
    runs: list[VersionRun] = []
    for version in versions:
        impl = submission_impl(profile.name, f"{prefixes[version]}?package={package}")
        try:
            _, outcomes = run_implementation(impl, cases, settings, args.timeout, profile.name)
        except ImplSpecError as error:
            print(f"pi-conformance compat: {version}: {error}", file=sys.stderr)
            return EXIT_USAGE
        runs.append(VersionRun(version, outcomes))
        passed = sum(outcome.status == "passed" for outcome in outcomes)
        print(f"  {version}: {passed}/{len(outcomes)} passed")
    write_page(out, cases, runs, profile.features, package, target, clauses)
    print(f"pi-conformance compat: wrote {out} ({len(runs)} versions, {len(cases)} cases)")
    if args.html:
        stats = write_matrix_site(Path(args.html), cases, [ImplRun(run.version, run.outcomes) for run in runs], clauses)
        print(f"pi-conformance compat: {stats.line()}")
    return 0
