"""``pi-conformance autograder gradescope|github-classroom``: the autograder a course uploads or commits."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.commands.checks import EXIT_USAGE, output_file_problem
from conformance.model.profiles import DEFAULT_PROFILE, PROFILES

EXIT_OK = 0
_WHEEL_HELP = "the pi-conformance wheel to ship (default: built from this checkout, or this install's own)"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``autograder`` and its two targets to the command line."""
    autograder = commands.add_parser("autograder", help="write a Gradescope autograder zip or a GitHub Classroom workflow")
    targets = autograder.add_subparsers(dest="target", required=True)

    gradescope = targets.add_parser(
        "gradescope",
        help="the autograder.zip Gradescope takes",
        description="Write the zip to upload as a Gradescope programming assignment's autograder: setup.sh, "
        "run_autograder, this pi-conformance's wheel, and the rubric and held-out set (kept from students).",
        epilog="The wheel: from a checkout, it is built (pip wheel, as `make wheel` does); an installed pi-conformance "
        "writes its own again from the installed files (checked against the wheel's RECORD); --wheel gives one.",
    )
    gradescope.add_argument("--out", required=True, metavar="FILE", help="the zip to write (e.g. autograder.zip)")
    gradescope.add_argument("--rubric", metavar="FILE", help="rubric YAML (default: the profile's shipped one)")
    gradescope.add_argument("--held-out", metavar="DIR", help="a private set of fixture files, graded and held out")
    gradescope.add_argument("--profile", default=DEFAULT_PROFILE, choices=list(PROFILES), help="the profile to grade (default: course)")
    gradescope.add_argument("--wheel", metavar="FILE", help=_WHEEL_HELP)
    gradescope.set_defaults(handler=gradescope_command)

    classroom = targets.add_parser(
        "github-classroom",
        help="the GitHub Classroom workflow for a course's template repository",
        description="Write OUT/.github/workflows/classroom.yml: one autograding test per lab, worth the lab's points, "
        "passed when `pi-conformance check . --lab LAB` finds the lab full (public cases only). No package index holds "
        "pi-conformance: the template carries its wheel and the toolchain lock in OUT/.github/pi-conformance/, which the "
        "workflow and the students' pre-check install.",
    )
    classroom.add_argument("--out", required=True, metavar="DIR", help="the template repository (or a folder to copy from)")
    classroom.add_argument("--rubric", metavar="FILE", help="rubric YAML: its labs and points (default: the shipped one)")
    classroom.add_argument(
        "--install",
        metavar="SPEC",
        help="what the workflow pip-installs instead of the carried wheel: a wheel URL staff host (no wheel is then carried)",
    )
    classroom.add_argument("--wheel", metavar="FILE", help=_WHEEL_HELP)
    classroom.set_defaults(handler=classroom_command)


def gradescope_command(args: argparse.Namespace) -> int:
    """Write the Gradescope zip."""
    from conformance.autograder.wheel import WheelError
    from conformance.gradescope.bundle import write_bundle
    from conformance.grading.rubric import RubricError

    out = Path(args.out)
    problem = output_file_problem("--out", out)
    if problem:
        print(f"pi-conformance autograder gradescope: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        bundle = write_bundle(
            out,
            args.profile,
            Path(args.rubric) if args.rubric else None,
            Path(args.held_out) if args.held_out else None,
            Path(args.wheel) if args.wheel else None,
        )
    except (RubricError, WheelError, OSError) as error:
        print(f"pi-conformance autograder gradescope: {error}", file=sys.stderr)
        return EXIT_USAGE
    held = f", {bundle.held_out_files} held-out fixture files" if bundle.held_out_files else ""
    rubric = ", the rubric" if bundle.rubric else ""
    print(
        f"pi-conformance autograder gradescope: {out} ({bundle.size // 1024} KiB): setup.sh, run_autograder, {bundle.wheel}{rubric}{held}"
    )
    print("  upload it as the autograder of a Gradescope programming assignment (see the manual's Deploying page, docs/deploying.md)")
    return EXIT_OK


def classroom_command(args: argparse.Namespace) -> int:
    """Write the GitHub Classroom workflow."""
    from conformance.autograder.classroom import precheck_command, write_template
    from conformance.autograder.wheel import WheelError
    from conformance.grading.rubric import RubricError, load_rubric

    try:
        rubric = load_rubric(Path(args.rubric) if args.rubric else None)
        template = write_template(Path(args.out), rubric, args.install, Path(args.wheel) if args.wheel else None)
    except (RubricError, WheelError, OSError) as error:
        print(f"pi-conformance autograder github-classroom: {error}", file=sys.stderr)
        return EXIT_USAGE
    if rubric.held_out:
        print(
            "pi-conformance autograder github-classroom: note: the rubric's held_out cases are checked like any other "
            "(students can read the workflow); grade held-out cases with grade-batch or Gradescope",
            file=sys.stderr,
        )
    points = ", ".join(f"lab {lab} {rule.weight:g}" for lab, rule in rubric.labs.items())
    carried = f" and {template.wheel.name}" if template.wheel else f" (it installs {template.install})"
    print(
        f"pi-conformance autograder github-classroom: {template.workflow} ({points} points){carried}, "
        f"{template.size // 1024} KiB in all; commit {args.out}/.github to the template repository"
    )
    print(f"  students check their work before they push with: {precheck_command(template.install)}")
    return EXIT_OK
