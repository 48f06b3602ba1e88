"""``pi-conformance check``: a student's own check of their course repository before they submit.

It grades the project the way ``grade`` does (the shipped rubric, the public fixtures bundled
with this package, the same build and sandbox) and prints the grader's own feedback, lab by
lab. Held-out cases (a private set staff grade with, or the rubric's ``held_out:`` ids) are
not part of it: a full lab here does not promise a full lab in the grade, and it says so.

``--lab`` judges one lab (or several): the exit status is 0 only when each is full, which is
what a GitHub Classroom test per lab runs. The whole project is graded either way, so a case
that fails only because of an earlier lab's bug is charged to that lab, as ``grade`` does.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

from conformance.adapters.kinds import submission_impl
from conformance.adapters.settings import ImplSettings
from conformance.commands.checks import EXIT_USAGE
from conformance.commands.options import SANDBOX, TIMEOUT
from conformance.grading.grader import SubmissionResult
from conformance.isolation.budget import submission_budget
from conformance.model.cases import LABS

EXIT_FULL = 0
EXIT_NOT_FULL = 1
#: Printed first and last: what a student must not read into a full score here.
HELD_OUT_NOTE = (
    "public cases only: held-out cases your course may grade with are NOT part of this check, so full labs here do not promise full marks"
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``check`` to the command line."""
    check = commands.add_parser(
        "check",
        help="students: check your course repository lab by lab before you submit (public cases only)",
        description="Build and check a course repository against the public cases, lab by lab, with the grader's feedback. "
        + HELD_OUT_NOTE
        + ".",
        epilog="exit status: 0 every lab checked is full, 1 some lab is not (or the build failed), 2 usage errors",
    )
    check.add_argument("project", nargs="?", default=".", metavar="PROJECT", help="the course repository (default: .)")
    check.add_argument(
        "--lab", action="append", choices=LABS, metavar="LAB", help=f"judge only this lab ({', '.join(LABS)}; repeatable; default: all)"
    )
    check.add_argument("-v", "--verbose", action="store_true", help="feedback for every failing case (default: 2 per lab)")
    TIMEOUT.add(check)
    SANDBOX.add(check)
    check.set_defaults(handler=check_command)


def student_notice(reason: str) -> str:
    """The no-sandbox note for a student checking their own code on their own machine (not the grading host's risks)."""
    return (
        f"pi-conformance check: note: your code runs here without the sandbox the grader uses ({reason}). "
        "On your own machine that is like running `npm test`: it runs as you, with your rights, and nobody else's "
        "work is here to reach. The course grades it inside the sandbox, where it cannot read or write outside "
        "your project; code that does will pass here and fail there. To check inside the same sandbox, install "
        "bubblewrap (Linux only: sudo apt-get install bubblewrap); --sandbox none hides this note."
    )


def only_labs(result: SubmissionResult, labs: list[str]) -> SubmissionResult:
    """``result`` with the score of ``labs`` only (the cases were graded with every lab)."""
    score = result.score
    kept = dataclasses.replace(
        score,
        cases=tuple(graded for graded in score.cases if graded.case.lab in labs),
        labs=tuple(lab for lab in score.labs if lab.lab in labs),
    )
    return dataclasses.replace(result, score=kept)


def is_full(points: float, max_points: float) -> bool:
    """True when a lab earned all its points (up to rounding)."""
    return math.isclose(points, max_points, rel_tol=1e-9, abs_tol=1e-9)


def _not_graded(chapter: str, labs: list[str], asked: list[str] | None, verdicts: list[bool]) -> None:
    """Say which labs the project's chapter leaves out (docs/grading.md); one asked for by --lab is not full."""
    if not labs:
        return
    at = chapter.partition(":")[0] or "an earlier chapter"
    if not asked:  # the chapters it has reached are the whole check
        print(f"check: not graded at {at}: {', '.join(labs)}")
        return
    for lab in labs:
        verdicts.append(False)
        print(f"check: lab {lab} NOT full (not graded: the project is at {at})")


def check_command(args: argparse.Namespace) -> int:
    """Grade the project against the public cases; exit 0 only when every lab judged is full."""
    from conformance.grading.grader import GradeOptions, grade_submission, prepare
    from conformance.grading.rubric import RubricError, load_rubric
    from conformance.isolation import sandbox
    from conformance.reports.formats import terminal

    sandbox.use_notice(student_notice)
    project = Path(args.project)
    if not project.is_dir():
        print(f"pi-conformance check: {project} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    try:
        context = prepare(load_rubric())
    except RubricError as error:  # only a broken install: the shipped rubric fits the shipped fixtures
        print(f"pi-conformance check: {error}", file=sys.stderr)
        return EXIT_USAGE
    # The shipped rubric holds nothing out, but a case it did would not be public: leave it out.
    public = dataclasses.replace(context, cases=tuple(case for case in context.cases if case.id not in context.rubric.held_out))
    print(f"pi-conformance check: {HELD_OUT_NOTE}.\n")
    options = GradeOptions(settings=ImplSettings(sandbox=args.sandbox), case_timeout_s=args.timeout)
    with submission_budget(options.settings.resource_limits()):  # one budget for everything it runs
        result = grade_submission(submission_impl(context.rubric.profile, project), public, options)
    labs = [lab for lab in LABS if lab in (args.lab or LABS)]
    shown = only_labs(result, labs)
    sys.stdout.write(terminal.render(shown, public.clauses, details_per_lab=None if args.verbose else terminal.DEFAULT_DETAILS_PER_LAB))
    verdicts = []
    for lab in shown.score.labs:
        full = result.status == "ok" and is_full(lab.points, lab.max_points)
        verdicts.append(full)
        state = "full" if full else "NOT full"
        earlier = f"; {lab.inherited} charged to an earlier lab" if lab.inherited else ""
        print(f"check: lab {lab.lab} {state} ({lab.passed}/{lab.total} public cases passed{earlier})")
    _not_graded(
        result.chapter,
        [lab for lab in labs if lab in context.rubric.labs and lab not in {lab.lab for lab in shown.score.labs}],
        args.lab,
        verdicts,
    )
    print(f"check: {HELD_OUT_NOTE}.")
    return EXIT_FULL if verdicts and all(verdicts) else EXIT_NOT_FULL
