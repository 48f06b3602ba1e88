"""``pi-conformance run``: the suite against one implementation, through pytest."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from conformance.adapters.resolve import IMPL_FORMS

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
    run.add_argument("--impl", default="reference", help="the implementation under test (default: reference)")
    run.add_argument("--profile", default="course", help="the profile to check: course (default) or pi-ai-1 (upstream pi-ai 1.x)")
    run.add_argument("-k", dest="keyword", help="select cases by pytest keyword expression (ids, lab_3_1, clause_SM_ABORT_1, ...)")
    run.add_argument("--lab", action="append", default=[], help="run only this lab; repeatable")
    run.add_argument("--chapter", action="append", default=[], help="run only this chapter (03, 04); repeatable")
    run.add_argument("--clause", action="append", default=[], help="run only cases checking this clause; repeatable")
    run.add_argument("--fixtures", help="fixtures folder (default: the bundled fixtures)")
    run.add_argument("--timeout", type=float, help="per-operation timeout in seconds (default 1)")
    run.add_argument("--report-json", help="write a JSON report to this file")
    run.add_argument("-v", "--verbose", action="store_true", help="list every case")
    run.add_argument(
        "--baseline", metavar="FILE", help="known failures (YAML/JSON, case id -> reason); exit 1 on an unexpected failure or a stale entry"
    )
    run.add_argument(
        "--write-baseline", metavar="FILE", help="write the cases that did not pass as a baseline (reasons kept from --baseline)"
    )
    process = run.add_argument_group("process implementations (cmd:, pi-course:)")
    process.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="add to the program's minimal environment")
    process.add_argument("--cpu-limit", type=int, metavar="SECONDS", help="CPU-time limit of the program")
    process.add_argument("--memory-limit", type=int, metavar="MIB", help="address-space limit of the program")
    process.add_argument("--build", action="store_true", help="pi-course: run the project's build first (npm run build, else tsc)")
    run.set_defaults(handler=run_command)


def pytest_arguments(args: argparse.Namespace) -> list[str]:
    """The pytest command line that runs the suite as ``args`` asks."""
    argv = [str(SUITE_DIR), "-p", "no:cacheprovider", "--impl", args.impl, "-rN"]
    argv.append("-v" if args.verbose else "-q")
    if args.profile != "course":
        argv += ["--profile", args.profile]
    if args.keyword:
        argv += ["-k", args.keyword]
    for option, values in (("--lab", args.lab), ("--chapter", args.chapter), ("--clause", args.clause)):
        for value in values:
            argv += [option, value]
    if args.fixtures:
        argv += ["--fixtures-dir", args.fixtures]
    if args.timeout is not None:
        argv += ["--case-timeout", str(args.timeout)]
    if args.report_json:
        argv += ["--report-json", args.report_json]
    for item in args.env:
        argv += ["--impl-env", item]
    if args.cpu_limit is not None:
        argv += ["--cpu-limit", str(args.cpu_limit)]
    if args.memory_limit is not None:
        argv += ["--memory-limit", str(args.memory_limit)]
    if args.build:
        argv.append("--build")
    if args.baseline:
        argv += ["--baseline", args.baseline]
    if args.write_baseline:
        argv += ["--write-baseline", args.write_baseline]
    return argv


def run_command(args: argparse.Namespace) -> int:
    """Run the suite; 0 exactly when every selected case passed (with --baseline: when the baseline holds)."""
    code = pytest.main(pytest_arguments(args))
    # Imported after pytest has started, so that pytest-cases is loaded (and rewritten) by pytest.
    from conformance.pytest_plugin import STATE, baseline_verdict

    if code in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.INTERRUPTED):
        return int(code)
    if not STATE.results:
        print("pi-conformance: no case matches the selection", file=sys.stderr)
        return EXIT_NO_CASES
    if STATE.baseline is not None:
        # Known failures are fine; a regression or a case that now passes (stale) is not.
        return 0 if baseline_verdict().holds else 1
    return 0 if all(result.outcome.status == "passed" for result in STATE.results) else 1
