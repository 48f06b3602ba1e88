"""``pi-conformance fixtures``: the fixture authors' toolkit (lint, check, coverage, new, regen, export)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds import Impl, ImplSpecError, default_impl, parse_impl, submission_kind
from conformance.authoring import coverage, next_steps
from conformance.authoring.export import ExportRefused, export_bundle
from conformance.authoring.lint import lint
from conformance.authoring.regen import RegenRefused, regenerate, write
from conformance.authoring.scaffold import ScaffoldError, scaffold_case
from conformance.authoring.scaffold_profile import scaffold_profile_case
from conformance.commands.checks import EXIT_USAGE
from conformance.loading.loader import load_suite
from conformance.model.cases import LABS
from conformance.model.clauses import load_clauses, load_profile_clauses
from conformance.model.paths import fixtures_dir
from conformance.model.profiles import ALL_OPERATIONS, DEFAULT_PROFILE, PI_AI_1, PROFILES, UnknownProfile, get_profile
from conformance.model.version import VersionError, profile_version

EXIT_PROBLEMS = 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``fixtures`` and its subcommands to the command line."""
    fixtures = commands.add_parser(
        "fixtures",
        help="tools for fixture authors: lint, check, coverage, new, regen, export",
        description="Tools for fixture authors (see CONTRIBUTING.md).",
    )
    subcommands = fixtures.add_subparsers(dest="fixtures_command", required=True, metavar="SUBCOMMAND")
    _add_lint(subcommands)
    _add_check(subcommands)
    _add_coverage(subcommands)
    _add_new(subcommands)
    _add_regen(subcommands)
    _add_export(subcommands)


def _add_lint(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`fixtures lint`: every problem in the fixture files."""
    lint_parser = subcommands.add_parser("lint", help="report every problem in the fixture files as file:line: case-id: message")
    _fixtures_option(lint_parser)
    lint_parser.add_argument(
        "--extra",
        action="store_true",
        help="the --fixtures folder holds extra cases (a held-out set, a fuzz finding), not a whole suite: no lab needs a case",
    )
    lint_parser.set_defaults(handler=lint_command)


def _add_check(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`fixtures check`: the rules that need the test code (one lab per bug), in a checkout."""
    check_parser = subcommands.add_parser(
        "check", help="in a checkout: report every case that makes a one-bug variant of the tests lose points outside its own lab"
    )
    _fixtures_option(check_parser)
    check_parser.add_argument(
        "--variants",
        action="append",
        metavar="MODULE:LIST",
        help="where the one-bug variants are listed (repeatable; default: tests.support.variants:VARIANTS)",
    )
    check_parser.set_defaults(handler=check_command)


def _add_coverage(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`fixtures coverage`: spec clauses against the cases that check them."""
    coverage_parser = subcommands.add_parser("coverage", help="spec clauses against the cases that check them (unchecked first)")
    _fixtures_option(coverage_parser)
    coverage_parser.add_argument("--format", choices=("markdown", "json"), default="markdown", help="report format (default: markdown)")
    coverage_parser.add_argument("--output", help="write the report to this file instead of standard output")
    coverage_parser.add_argument("--check", action="store_true", help="exit 1 when a clause of any profile has no case")
    coverage_parser.add_argument("--profile", default=DEFAULT_PROFILE, help="the profile whose clauses to report (default: course)")
    coverage_parser.add_argument(
        "--sort",
        choices=("status", "cases"),
        default="status",
        help="row order: status (unchecked first, then spec order; the default) or cases (fewest cases first, to find thin spots)",
    )
    coverage_parser.set_defaults(handler=coverage_command)


def _add_new(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`fixtures new`: a scaffold case appended to the right file."""
    new_parser = subcommands.add_parser("new", help="append a scaffold case (fresh id, TODO placeholders) to the right file")
    _fixtures_option(new_parser)
    every_operation = sorted(ALL_OPERATIONS)
    new_parser.add_argument(
        "--operation",
        required=True,
        action="append",
        choices=every_operation,
        help="the case's operation; for a shared case whose profiles' operations differ (agent tier), one per profile in --profile order",
    )
    new_parser.add_argument("--lab", choices=LABS, help="the case's lab (course profile: required)")
    new_parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="the case's profile (default: course); pi-ai-1 cases get their area; course,pi-ai-1 scaffolds a shared case",
    )
    naming = new_parser.add_mutually_exclusive_group()
    naming.add_argument("--id", dest="case_id", help="the new case's id (default: the file's id prefix and a counter)")
    naming.add_argument("--slug", help="words after the file's id prefix, e.g. abort-twice gives sm-abort-abort-twice")
    new_parser.add_argument("--file", help="fixture file, relative to the fixtures folder (e.g. ch04/aborts.yaml); created if new")
    new_parser.set_defaults(handler=new_command)


def _add_regen(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`fixtures regen`: expectations recomputed from a reference."""
    regen_parser = subcommands.add_parser("regen", help="recompute cases' expectations from the reference and show the diff")
    _fixtures_option(regen_parser)
    regen_parser.add_argument("case_ids", nargs="+", metavar="CASE_ID", help="ids of the cases to regenerate")
    regen_parser.add_argument("--write", action="store_true", help="write the change (default: only show the diff)")
    regen_parser.add_argument("--profile", default=DEFAULT_PROFILE, help="the profile of the cases (default: course)")
    regen_parser.add_argument(
        "--reference",
        type=parse_impl,
        metavar="IMPL",
        help=f"the implementation expectations come from, any --impl form (default: {default_impl(DEFAULT_PROFILE)}, the course's; "
        f"{PI_AI_1.name}: {submission_kind(PI_AI_1.name).usage})",
    )
    regen_parser.set_defaults(handler=regen_command)


def _add_export(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`fixtures export`: a versioned bundle of the fixtures."""
    export_parser = subcommands.add_parser("export", help="write a versioned bundle (YAML, JSON, schemas, spec, manifest)")
    _fixtures_option(export_parser)
    export_parser.add_argument("dir", help="the bundle folder (new or empty)")
    export_parser.add_argument("--force", action="store_true", help="replace an earlier bundle in that folder")
    export_parser.set_defaults(handler=export_command)


def _fixtures_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fixtures", help="fixtures folder (default: the bundled fixtures)")


def _root(args: argparse.Namespace) -> Path:
    return Path(args.fixtures) if args.fixtures else fixtures_dir()


def lint_command(args: argparse.Namespace) -> int:
    """Print every problem; 1 when there is any."""
    return _report("lint", [str(problem) for problem in lint(_root(args), extra=args.extra)], "no problems")


def _report(command: str, problems: list[str], clean: str) -> int:
    """Each problem on standard output and a count on standard error: 1 when there is any."""
    for problem in problems:
        print(problem)
    if problems:
        print(f"fixtures {command}: {len(problems)} problem(s)", file=sys.stderr)
        return EXIT_PROBLEMS
    print(f"fixtures {command}: {clean}", file=sys.stderr)
    return 0


def check_command(args: argparse.Namespace) -> int:
    """Print every case that breaks the one-lab-per-bug rule; 1 when there is any."""
    from conformance.commands import fixtures_check

    try:
        problems = fixtures_check.check(args.variants or fixtures_check.DEFAULT_VARIANTS, _root(args) if args.fixtures else None)
    except ImportError as error:
        print(f"fixtures check: cannot import the variants ({error}); run it in a checkout, from its root", file=sys.stderr)
        return EXIT_USAGE
    return _report("check", [str(problem) for problem in problems], "every one-bug variant loses points only in its own lab")


def coverage_command(args: argparse.Namespace) -> int:
    """Print (or write) the coverage report; with ``--check``, 1 when a clause has no case."""
    suite = load_suite(_root(args))
    try:
        version = profile_version(args.profile)
    except VersionError as error:
        print(f"fixtures coverage: {error}", file=sys.stderr)
        return EXIT_PROBLEMS
    table = coverage.compute(load_clauses(), suite.cases, version, broken=len(suite.broken))
    if args.profile != DEFAULT_PROFILE:
        profile_suite = load_suite(_root(args), profile=args.profile)
        table = coverage.compute(load_profile_clauses(args.profile), profile_suite.cases, version, broken=len(profile_suite.broken))
    if args.sort == "cases":
        table = coverage.by_case_count(table)
    report = coverage.to_json(table) if args.format == "json" else coverage.to_markdown(table)
    if args.output:
        Path(args.output).write_text(report, encoding="utf-8")
    else:
        sys.stdout.write(report)
    print(f"fixtures {table.summary()}", file=sys.stderr)
    print(f"fixtures {table.hint_summary()}", file=sys.stderr)
    unchecked = bool(table.unchecked)
    if args.check:
        # --check covers every profile: a clause of any spec document without a case fails it.
        for name in PROFILES:
            if name == args.profile:
                continue
            other_suite = load_suite(_root(args), profile=name)
            if not other_suite.cases and not other_suite.broken:
                continue  # a fixtures folder without this profile's files (a course-only held-out set)
            other = coverage.compute(load_profile_clauses(name), other_suite.cases, profile_version(name), broken=len(other_suite.broken))
            print(f"fixtures (profile {name}) {other.summary()}", file=sys.stderr)
            unchecked = unchecked or bool(other.unchecked)
    return EXIT_PROBLEMS if args.check and unchecked else 0


def new_command(args: argparse.Namespace) -> int:
    """Append a scaffold case and print where it went."""
    names = [name.strip() for name in args.profile.split(",") if name.strip()]
    try:
        if names == [DEFAULT_PROFILE]:
            if args.lab is None:
                raise ScaffoldError("--lab is required for a course case")
            if len(args.operation) != 1:
                raise ScaffoldError("a course case has one --operation")
            written = scaffold_case(_root(args), args.operation[0], args.lab, case_id=args.case_id, slug=args.slug, file=args.file)
        else:
            written = scaffold_profile_case(
                _root(args), names, args.operation, args.lab, case_id=args.case_id, slug=args.slug, file=args.file
            )
    except (ScaffoldError, UnknownProfile) as error:
        print(f"fixtures new: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{_relative(written.path)}:{written.line}: {written.case_id}: scaffold added")
    # Each names an implementation of its profile that works here (pi-ai-1: not the default reference).
    runs = [f"  {command}" for name in names for command in next_steps.run_commands(name, written.case_id, args.fixtures)]
    where = f" --fixtures {shlex.quote(args.fixtures)}" if args.fixtures else ""
    print(
        "next: replace every TODO with what the spec prescribes, then run",
        f"  pi-conformance fixtures lint{where}",
        *runs,
        sep="\n",
        file=sys.stderr,
    )
    return 0


def regen_command(args: argparse.Namespace) -> int:
    """Show (and with ``--write``, apply) regenerated expectations; 1 when anything was refused."""
    factory = None
    if args.reference is not None:
        factory = _reference_factory(args.reference)
    try:
        _check_profile(args.profile)
        result = regenerate(args.case_ids, _root(args), factory, profile=args.profile)
    except RegenRefused as error:
        print(f"fixtures regen: refused: {error}", file=sys.stderr)
        return EXIT_PROBLEMS
    sys.stdout.write(result.diff)
    for note in result.notes:
        print(note, file=sys.stderr)
    for refusal in result.refused:
        print(f"refused: {refusal}", file=sys.stderr)
    if args.write:
        for path in write(result):
            print(f"wrote {_relative(path)}", file=sys.stderr)
    elif result.diff:
        print("fixtures regen: nothing written; review the diff, then re-run with --write to apply it", file=sys.stderr)
    return EXIT_PROBLEMS if result.refused else 0


def _reference_factory(impl: Impl) -> Callable[[], Adapter]:
    """Builds the adapter ``--reference`` names, when regen needs it."""

    def create() -> Adapter:
        try:
            return impl.adapter()
        except ImplSpecError as error:
            raise RegenRefused(f"--reference {impl}: {error}") from error

    return create


def _check_profile(name: str) -> None:
    try:
        get_profile(name)
    except UnknownProfile as error:
        raise RegenRefused(str(error)) from error


def export_command(args: argparse.Namespace) -> int:
    """Write the bundle and print its version and content hash."""
    target = Path(args.dir)
    try:
        document = export_bundle(target, _root(args), force=args.force)
    except (ExportRefused, VersionError) as error:
        print(f"fixtures export: {error}", file=sys.stderr)
        return EXIT_PROBLEMS
    cases = document["cases"]
    count = len(cases) if isinstance(cases, list) else 0
    print(f"{_relative(target)}: {count} cases, spec and fixtures {document['bundle_version']}, content hash {document['content_hash']}")
    return 0


def _relative(path: Path) -> str:
    """A path as the user would type it: relative to the current folder when inside it."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    except (OSError, ValueError):  # no current folder (it was the bundle folder, replaced)
        return str(path)
