"""``pi-conformance grade``, ``grade-batch`` and ``gradebook-merge``: scores and feedback for a class."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from conformance.adapters.kinds import (
    BUILT_KINDS,
    IMPL_FORMS,
    IN_PROCESS_KINDS,
    PROCESS_GROUP,
    Impl,
    default_impl,
    parse_impl,
    profile_problem,
    submission_impl,
    submission_kind,
    submission_spec,
)
from conformance.commands.batch_users import add_jobs_options, batch_uids
from conformance.commands.checks import (
    EXIT_USAGE,
    non_negative_integer,
    output_file_problem,
    output_folder_problem,
    positive_number,
    same_file_problem,
)
from conformance.commands.interrupts import sigterm_as_interrupt
from conformance.commands.options import FIXTURES, TIMEOUT, add_process_options, process_settings
from conformance.common.atomic_file import private_output, write_text_atomic
from conformance.farm.batch import BatchOptions, discover_submissions, grade_batch, name_clash, submission_name
from conformance.farm.gradebook import GradebookError, columns, merge_gradebooks, meta_path
from conformance.farm.job import failed_result
from conformance.farm.journal import GRADEBOOK, Journal, JournalError
from conformance.farm.report_files import WRITERS
from conformance.farm.shard import ShardError, resolve_shard, select_shard
from conformance.grading import baseline as baselines
from conformance.grading.grader import GradeOptions, GradingContext, SubmissionResult, grade_submission, prepare
from conformance.grading.rubric import RubricError, load_rubric
from conformance.isolation.budget import BudgetUnavailable, submission_budget
from conformance.isolation.run_as import RunAsError, parse_run_as, run_as_problem
from conformance.loading.loader import load_suite
from conformance.model.profiles import DEFAULT_PROFILE, PI_AI_1, PROFILES, profiles_in_words
from conformance.reports.formats import terminal
from conformance.reports.html.batch_site import HtmlBatch

EXIT_OK = 0
EXIT_NOT_OK = 1
EXIT_INTERRUPTED = 130
WORK_DIR = ".work"


_IMPL_HELP = (
    f"the submission (default: {default_impl(DEFAULT_PROFILE)}, the course's; --profile {PI_AI_1.name} needs one, "
    f"e.g. {submission_kind(PI_AI_1.name).usage})"
)
_TEMPLATE_HELP = (
    "the --impl of a submission; {path} is its folder, {name} its name "
    f"(default: {submission_impl(DEFAULT_PROFILE, '{path}')}; with --profile {PI_AI_1.name}: {submission_impl(PI_AI_1.name, '{path}')}, "
    "each folder an installed @earendil-works/pi-ai)"
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``grade``, ``grade-batch`` and ``gradebook-merge`` to the command line."""
    grade = commands.add_parser(
        "grade",
        help="grade one submission: points per lab, failing cases and feedback",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="implementations (--impl):\n  " + "\n  ".join(IMPL_FORMS) + "\n\nexit status: 0 graded normally (any score), "
        "1 build failed, crashed, hung or nothing to grade (or --baseline broken), 2 bad rubric or implementation",
    )
    grade.add_argument("--impl", type=parse_impl, help=_IMPL_HELP)
    _grading_options(grade)
    reports = grade.add_argument_group("reports (any combination, each to its own file)")
    reports.add_argument("--markdown", metavar="FILE", help="Markdown report")
    reports.add_argument("--junit", metavar="FILE", help="JUnit XML report")
    reports.add_argument("--gradescope", metavar="FILE", help="Gradescope results.json")
    reports.add_argument("--json", metavar="FILE", help="JSON report (everything)")
    grade.add_argument(
        "--details",
        type=non_negative_integer,
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
    add_jobs_options(batch)
    batch.add_argument(
        "--shard",
        metavar="K/N|auto",
        help="grade only shard K of N (1-based; round robin over the sorted names); auto: from PI_SHARD=K/N, "
        "a Kubernetes Indexed Job (JOB_COMPLETION_INDEX + PI_SHARD_COUNT) or a Slurm array (SLURM_ARRAY_TASK_*)",
    )
    batch.add_argument("--out", default="grades", metavar="DIR", help="output folder (default: ./grades); a batch run again on it resumes")
    batch.add_argument("--fresh", action="store_true", help="grade every submission again, replacing OUT's gradebook (default: resume it)")
    batch.add_argument("--impl-template", type=parse_impl, metavar="TEMPLATE", help=_TEMPLATE_HELP)
    batch.add_argument("--html", metavar="DIR", help="also write a static HTML site: class overview, one page per submission")
    batch.add_argument("--for-students", action="store_true", help="with --html: leave held-out cases out of the site entirely")
    batch.set_defaults(handler=grade_batch_command)

    merge = commands.add_parser("gradebook-merge", help="join the gradebooks of several shards into one")
    merge.add_argument("gradebooks", nargs="+", metavar="CSV", help="gradebook.csv of each shard")
    merge.add_argument("-o", "--output", required=True, metavar="FILE", help="the merged gradebook")
    merge.set_defaults(handler=gradebook_merge_command)


def _grading_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        choices=list(PROFILES),
        help=f"the profile to grade, points by its group: {profiles_in_words()}",
    )
    parser.add_argument("--rubric", metavar="FILE", help="rubric YAML of the --profile (default: the profile's own, 25 points a lab)")
    parser.add_argument(
        "--build",
        action=argparse.BooleanOptionalAction,
        default=True,
        help=f"{BUILT_KINDS} build the project first, the rubric's way (build:, default: the course's package.json and tsconfig.json "
        "pinned, the pinned tsc -p tsconfig.json), which type-checks it (offline; default: on)",
    )
    FIXTURES.add(parser)
    parser.add_argument(
        "--held-out",
        metavar="DIR",
        help="a folder of extra fixture files of the --profile (a private set): graded in their labs, every case held out",
    )
    TIMEOUT.add(parser)
    parser.add_argument(
        "--budget",
        type=positive_number,
        default=600.0,
        metavar="SECONDS",
        help="wall-clock budget for one submission's cases; the rest are not run (default 600)",
    )
    process = parser.add_argument_group(PROCESS_GROUP)
    add_process_options(process)
    process.add_argument(
        "--run-as",
        metavar="USER",
        help="run student processes (builds and runs) as this unprivileged user (a name or uid); the grader must be root",
    )
    parser.add_argument(
        "--trust-python", action="store_true", help=f"allow {IN_PROCESS_KINDS} submissions (they run unsandboxed, in process)"
    )


def _context(args: argparse.Namespace) -> GradingContext:
    rubric = load_rubric(Path(args.rubric) if args.rubric else None, args.profile)
    return prepare(rubric, Path(args.fixtures) if args.fixtures else None, Path(args.held_out) if args.held_out else None)


def _impl_problem(impl: Impl, args: argparse.Namespace, option: str = "--impl") -> str | None:
    """Why ``impl`` cannot be graded as asked (profile, trust), before anything runs."""
    return profile_problem(impl, args.profile, option) or impl.trust_problem(args.trust_python)


def _options(args: argparse.Namespace, impl: Impl) -> GradeOptions:
    """Grading options from the command line for ``impl`` (or a template of it); :class:`RunAsError` when ``--run-as`` cannot work here."""
    run_as = None
    if args.run_as:
        run_as = parse_run_as(args.run_as)
        problem = run_as_problem(run_as, impl.process_needs(args.build))
        if problem:
            raise RunAsError(problem)
    settings = process_settings(args, run_as=run_as)
    return GradeOptions(settings=settings, build=args.build, case_timeout_s=args.timeout, budget_s=args.budget)


def _grade_in_budget(impl: Impl, context: GradingContext, options: GradeOptions) -> SubmissionResult:
    """Grade ``impl`` with one budget (memory, processes) for everything it runs; :class:`BudgetUnavailable` if none can be made."""
    with submission_budget(options.settings.resource_limits()):
        return _grade_always(impl, context, options)


def grade_command(args: argparse.Namespace) -> int:
    """Grade one submission and write the reports asked for."""
    with private_output():  # its reports are for staff: never readable by the --run-as user
        return _grade_command(args)


def _grade_command(args: argparse.Namespace) -> int:
    args.impl = args.impl or default_impl(args.profile)
    if args.impl is None:
        example = submission_spec(args.profile, "PATH")
        message = f"--profile {args.profile} has no bundled implementation: give --impl (e.g. {example})"
        print(f"pi-conformance grade: {message}", file=sys.stderr)
        return EXIT_USAGE
    refused = _impl_problem(args.impl, args)
    if refused:
        print(f"pi-conformance grade: {refused}", file=sys.stderr)
        return EXIT_USAGE
    targets = [(f"--{name}", getattr(args, name)) for name in WRITERS]
    problems = [output_file_problem(option, Path(target)) for option, target in targets if target]
    problem = next((problem for problem in problems if problem), None) or same_file_problem(targets)
    if problem:
        print(f"pi-conformance grade: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        context = _context(args)
        known = baselines.load_baseline(Path(args.baseline)) if args.baseline else None
        options = _options(args, args.impl)
        result = _grade_in_budget(args.impl, context, options)
    except (RubricError, baselines.BaselineError, RunAsError, BudgetUnavailable) as error:
        print(f"pi-conformance grade: {error}", file=sys.stderr)
        return EXIT_USAGE
    details = None if args.verbose else args.details
    sys.stdout.write(terminal.render(result, context.clauses, details_per_lab=details))
    # Every report is rendered before any is written, and each is written atomically: a
    # failure leaves the files that were there before intact.
    rendered = [(name, Path(target), WRITERS[name][0](result, context.clauses)) for name in WRITERS if (target := getattr(args, name))]
    for format_name, target_path, text in rendered:
        try:
            write_text_atomic(target_path, text)
        except OSError as error:
            print(f"pi-conformance grade: cannot write the {format_name} report {target_path}: {error}", file=sys.stderr)
            return EXIT_USAGE
        print(f"  {format_name} report written to {target_path}")
    if result.status == "invalid":
        return EXIT_USAGE
    code = EXIT_OK if result.status == "ok" else EXIT_NOT_OK
    if known is not None:
        # Every case id of the fixtures, as `run` does: a baselined id that names no case is stale.
        suite = load_suite(Path(args.fixtures) if args.fixtures else None, context.clauses, context.rubric.profile)
        known_ids = [case.id for case in (*suite.cases, *context.cases)] + [broken.id for broken in suite.broken]
        verdict = baselines.compare(known, [(graded.case.id, graded.outcome.status) for graded in result.score.cases], known_ids)
        print("\n".join(verdict.lines(args.baseline)))
        if not verdict.holds:
            code = EXIT_NOT_OK
    return code


def _grade_always(impl: Impl, context: GradingContext, options: GradeOptions) -> SubmissionResult:
    """The submission's result; a ``crashed`` one, with the reason, when grading it raised.

    Whatever the tree holds (issue 32: a 1,500-level tree, a 5,000-character path), the
    reports are still written: a grader bug on one submission is a result, never a traceback.
    """
    started = time.perf_counter()
    try:
        return grade_submission(impl, context, options)
    except Exception as error:
        detail = f"the grader failed on this submission: {type(error).__name__}: {error}"
        return failed_result(impl.name, impl.spec, context, "crashed", detail, time.perf_counter() - started)


def grade_batch_command(args: argparse.Namespace) -> int:
    """Grade a folder of submissions into a gradebook and per-submission reports, resuming OUT."""
    with private_output():  # OUT, the gradebook and every report: never readable by a submission's user
        return _grade_batch_command(args)


def _grade_batch_command(args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    out = Path(args.out)
    problem = _batch_usage_problem(args, directory, out)
    batch = _open_batch(args, directory, out) if problem is None else problem
    if isinstance(batch, str):
        print(f"pi-conformance grade-batch: {batch}", file=sys.stderr)
        return EXIT_USAGE
    pending = batch.journal.pending(batch.submissions)
    if len(pending) < len(batch.submissions):
        print(
            f"pi-conformance grade-batch: resuming {batch.gradebook}: {len(batch.submissions) - len(pending)} of {len(batch.submissions)} "
            "submissions already graded (--fresh grades them again)",
            file=sys.stderr,
        )
    html = HtmlBatch(out, Path(args.html), args.for_students) if args.html else None
    if not _run_batch(args, out, batch, pending, html):
        return EXIT_INTERRUPTED
    batch.journal.finish()
    statuses = [entry["status"] for entry in batch.journal.rows.values()]
    ok = statuses.count("ok")
    print(f"pi-conformance grade-batch: {len(statuses)} submissions, {ok} ok, {len(statuses) - ok} not ok; gradebook: {batch.gradebook}")
    if html is not None:
        stats, _ = html.build(batch.context, batch.journal.rows)
        print(f"pi-conformance grade-batch: html site: {stats.line()}")
    return EXIT_OK if ok == len(statuses) else EXIT_NOT_OK


@dataclass(frozen=True)
class _Batch:
    """A class to grade: the submissions of this shard, what they are graded against, and the journal of their rows."""

    context: GradingContext
    submissions: list[Path]
    grade_options: GradeOptions
    journal: Journal
    gradebook: Path
    #: ``--run-as-range``: one uid per job at once (none: the settings' one user).
    uids: tuple[int, ...] = ()


def _batch_usage_problem(args: argparse.Namespace, directory: Path, out: Path) -> str | None:
    """What is wrong with grade-batch's arguments, before anything is read or graded (fills in the default template)."""
    if not directory.is_dir():
        return f"{directory} is not a folder"
    args.impl_template = args.impl_template or submission_impl(args.profile, "{path}")
    if "{path}" not in args.impl_template.spec and "{name}" not in args.impl_template.spec:
        return "--impl-template needs {path} or {name}"
    refused = _impl_problem(args.impl_template, args, "--impl-template")
    if refused:
        return refused
    gradebook = out / GRADEBOOK
    problem = output_folder_problem("--out", out, files=(GRADEBOOK, meta_path(gradebook).name), folders=("reports", WORK_DIR))
    return problem or _html_problem(args)


def _open_batch(args: argparse.Namespace, directory: Path, out: Path) -> _Batch | str:
    """The shard's submissions, the grading context and the journal opened (resumed); what went wrong, if anything."""
    try:
        shard = resolve_shard(args.shard, os.environ)
        context = _context(args)
        submissions = select_shard(discover_submissions(directory), *shard)
        names = [submission_name(path) for path in submissions]
        clash = name_clash(names)
        if clash:
            return clash
        grade_options = _options(args, args.impl_template)
        uids = batch_uids(args, grade_options.settings)
        journal = Journal.open(out, columns(context.rubric), shard, names, fresh=args.fresh, profile=args.profile)
        out.chmod(0o700)
    except (RubricError, ShardError, JournalError, RunAsError) as error:
        return str(error)
    except OSError as error:
        return f"cannot use {out}: {error}"
    return _Batch(context, submissions, grade_options, journal, out / GRADEBOOK, uids)


def _run_batch(args: argparse.Namespace, out: Path, batch: _Batch, pending: list[Path], html: HtmlBatch | None) -> bool:
    """Grade the pending submissions into the journal; False when interrupted (Ctrl-C or SIGTERM), the rows so far kept."""
    work_dir = out / WORK_DIR
    options = BatchOptions(
        grade=batch.grade_options,
        jobs=args.jobs,
        impl_template=args.impl_template.spec,
        reports_dir=out / "reports",
        work_dir=work_dir,
        reap_orphans=True,
        run_as_uids=batch.uids,
    )
    on_result = html.wrap(batch.journal.record) if html is not None else batch.journal.record
    try:
        with sigterm_as_interrupt():
            grade_batch(pending, batch.context, options, stream=sys.stderr, on_result=on_result)
    except KeyboardInterrupt:
        batch.journal.finish()
        kept = f"{len(batch.journal.rows)} of {len(batch.submissions)} rows kept in {batch.gradebook}"
        print(
            f"pi-conformance grade-batch: interrupted; {kept}. Run the same command again to grade the rest.",
            file=sys.stderr,
        )
        return False
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    return True


def _html_problem(args: argparse.Namespace) -> str | None:
    if args.for_students and not args.html:
        return "--for-students goes with --html"
    return output_folder_problem("--html", Path(args.html)) if args.html else None


def gradebook_merge_command(args: argparse.Namespace) -> int:
    """Join shard gradebooks, refusing overlaps and missing or unfinished shards."""
    problem = output_file_problem("--output", Path(args.output))
    if problem:
        print(f"pi-conformance gradebook-merge: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        count = merge_gradebooks([Path(path) for path in args.gradebooks], Path(args.output))
    except (GradebookError, OSError) as error:
        print(f"pi-conformance gradebook-merge: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"pi-conformance gradebook-merge: {count} submissions from {len(args.gradebooks)} gradebooks written to {args.output}")
    return EXIT_OK
