"""``pi-conformance grade``, ``grade-batch`` and ``gradebook-merge``: scores and feedback for a class."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.adapters.resolve import IMPL_FORMS, untrusted_in_process
from conformance.adapters.sandbox import add_sandbox_option
from conformance.adapters.settings import ImplSettings
from conformance.grading import baseline as baselines
from conformance.grading.batch import BatchOptions, discover_submissions, grade_batch
from conformance.grading.formats import terminal
from conformance.grading.gradebook import GradebookError, merge_gradebooks, write_gradebook
from conformance.grading.grader import GradeOptions, GradingContext, grade_submission, prepare
from conformance.grading.reports import WRITERS, write_report
from conformance.grading.rubric import RubricError, load_rubric
from conformance.grading.shard import ShardError, parse_shard, select_shard

EXIT_OK = 0
EXIT_NOT_OK = 1
EXIT_USAGE = 2


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``grade``, ``grade-batch`` and ``gradebook-merge`` to the command line."""
    grade = commands.add_parser(
        "grade",
        help="grade one submission: points per lab, failing cases and feedback",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="implementations (--impl):\n  " + "\n  ".join(IMPL_FORMS) + "\n\nexit status: 0 graded normally (any score), "
        "1 build failed, crashed, hung or nothing to grade (or --baseline broken), 2 bad rubric or implementation",
    )
    grade.add_argument("--impl", default="reference", help="the submission (default: reference)")
    _grading_options(grade)
    reports = grade.add_argument_group("reports (any combination, each to its own file)")
    reports.add_argument("--markdown", metavar="FILE", help="Markdown report")
    reports.add_argument("--junit", metavar="FILE", help="JUnit XML report")
    reports.add_argument("--gradescope", metavar="FILE", help="Gradescope results.json")
    reports.add_argument("--json", metavar="FILE", help="JSON report (everything)")
    grade.add_argument(
        "--details",
        type=int,
        default=terminal.DEFAULT_DETAILS_PER_LAB,
        metavar="N",
        help="full feedback for up to N failing cases per lab (default 2)",
    )
    grade.add_argument("-v", "--verbose", action="store_true", help="full feedback for every failing case")
    grade.add_argument("--baseline", metavar="FILE", help="known failures (YAML/JSON); exit 1 on an unexpected failure or a stale entry")
    grade.set_defaults(handler=grade_command)

    batch = commands.add_parser(
        "grade-batch",
        help="grade every submission folder under DIR into a gradebook",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Each direct subfolder of DIR is one submission (hidden folders are ignored). Writes OUT/gradebook.csv\n"
        "and OUT/reports/<submission>/ (report.md, junit.xml, results.json, report.json, build.log).\n"
        "exit status: 0 every submission graded normally, 1 some did not (see the status column), 2 usage errors",
    )
    batch.add_argument("directory", metavar="DIR", help="folder of submissions, one subfolder each")
    _grading_options(batch)
    batch.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="grade up to N submissions at once (default 1)")
    batch.add_argument("--shard", metavar="K/N", help="grade only shard K of N (1-based; round robin over the sorted names)")
    batch.add_argument("--out", default="grades", metavar="DIR", help="output folder (default: ./grades)")
    batch.add_argument(
        "--impl-template",
        default="pi-course:{path}",
        metavar="TEMPLATE",
        help="the --impl of a submission; {path} is its folder, {name} its name (default: pi-course:{path})",
    )
    batch.set_defaults(handler=grade_batch_command)

    merge = commands.add_parser("gradebook-merge", help="join the gradebooks of several shards into one")
    merge.add_argument("gradebooks", nargs="+", metavar="CSV", help="gradebook.csv of each shard")
    merge.add_argument("-o", "--output", required=True, metavar="FILE", help="the merged gradebook")
    merge.set_defaults(handler=gradebook_merge_command)


def _grading_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rubric", metavar="FILE", help="rubric YAML (default: the shipped 4 x 25 points, cases equal)")
    parser.add_argument("--build", action="store_true", help="pi-course: run the project's npm run build first (offline; never npx)")
    parser.add_argument("--fixtures", metavar="DIR", help="fixtures folder (default: the bundled fixtures)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="per-operation timeout (default 1)")
    parser.add_argument(
        "--budget",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="wall-clock budget for one submission's cases; the rest are not run (default 600)",
    )
    process = parser.add_argument_group("process implementations (cmd:, pi-course:)")
    process.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="add to the program's minimal environment")
    process.add_argument("--cpu-limit", type=int, metavar="SECONDS", help="CPU-time limit of the program")
    process.add_argument("--memory-limit", type=int, metavar="MIB", help="address-space limit of the program")
    add_sandbox_option(process)
    parser.add_argument("--trust-python", action="store_true", help="allow python: submissions (they run unsandboxed, in process)")


def _context(args: argparse.Namespace) -> GradingContext:
    rubric = load_rubric(Path(args.rubric) if args.rubric else None)
    return prepare(rubric, Path(args.fixtures) if args.fixtures else None)


def _options(args: argparse.Namespace) -> GradeOptions:
    settings = ImplSettings(
        env=dict(item.partition("=")[::2] for item in args.env),
        cpu_limit_s=args.cpu_limit,
        memory_limit_mb=args.memory_limit,
        sandbox=args.sandbox,
    )
    return GradeOptions(settings=settings, build=args.build, case_timeout_s=args.timeout, budget_s=args.budget or None)


def grade_command(args: argparse.Namespace) -> int:
    """Grade one submission and write the reports asked for."""
    refused = untrusted_in_process(args.impl, args.trust_python)
    if refused:
        print(f"pi-conformance grade: {refused}", file=sys.stderr)
        return EXIT_USAGE
    try:
        context = _context(args)
        known = baselines.load_baseline(Path(args.baseline)) if args.baseline else None
    except (RubricError, baselines.BaselineError) as error:
        print(f"pi-conformance grade: {error}", file=sys.stderr)
        return EXIT_USAGE
    result = grade_submission(args.impl, context, _options(args))
    details = None if args.verbose else args.details
    sys.stdout.write(terminal.render(result, context.clauses, details_per_lab=details))
    for format_name in WRITERS:
        target = getattr(args, format_name)
        if target:
            write_report(format_name, Path(target), result, context.clauses)
            print(f"  {format_name} report written to {target}")
    if result.status == "invalid":
        return EXIT_USAGE
    code = EXIT_OK if result.status == "ok" else EXIT_NOT_OK
    if known is not None:
        verdict = baselines.compare(known, [(graded.case.id, graded.outcome.status) for graded in result.score.cases])
        print("\n".join(verdict.lines(args.baseline)))
        if not verdict.holds:
            code = EXIT_NOT_OK
    return code


def grade_batch_command(args: argparse.Namespace) -> int:
    """Grade a folder of submissions into a gradebook and per-submission reports."""
    directory = Path(args.directory)
    if not directory.is_dir():
        print(f"pi-conformance grade-batch: {directory} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    if args.jobs < 1:
        print("pi-conformance grade-batch: --jobs must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    try:
        context = _context(args)
        submissions = discover_submissions(directory)
        if args.shard:
            submissions = select_shard(submissions, *parse_shard(args.shard))
    except (RubricError, ShardError) as error:
        print(f"pi-conformance grade-batch: {error}", file=sys.stderr)
        return EXIT_USAGE
    refused = untrusted_in_process(args.impl_template, args.trust_python)
    if refused:
        print(f"pi-conformance grade-batch: {refused}", file=sys.stderr)
        return EXIT_USAGE
    if "{path}" not in args.impl_template and "{name}" not in args.impl_template:
        print("pi-conformance grade-batch: --impl-template needs {path} or {name}", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.out)
    options = BatchOptions(grade=_options(args), jobs=args.jobs, impl_template=args.impl_template, reports_dir=out / "reports")
    results = grade_batch(submissions, context, options, stream=sys.stderr)
    gradebook = out / "gradebook.csv"
    write_gradebook(gradebook, results, context.rubric)
    ok = sum(result.status == "ok" for result in results)
    print(f"pi-conformance grade-batch: {len(results)} submissions, {ok} ok, {len(results) - ok} not ok; gradebook: {gradebook}")
    return EXIT_OK if ok == len(results) else EXIT_NOT_OK


def gradebook_merge_command(args: argparse.Namespace) -> int:
    """Join shard gradebooks, refusing overlaps."""
    try:
        count = merge_gradebooks([Path(path) for path in args.gradebooks], Path(args.output))
    except GradebookError as error:
        print(f"pi-conformance gradebook-merge: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"pi-conformance gradebook-merge: {count} submissions from {len(args.gradebooks)} gradebooks written to {args.output}")
    return EXIT_OK
