"""``pi-conformance doctor``: one screen that says whether this machine can grade, and how to fix it."""

from __future__ import annotations

import argparse
import sys

EXIT_READY = 0
EXIT_NOT_READY = 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``doctor`` to the command line."""
    doctor = commands.add_parser(
        "doctor",
        help="check this machine: Python, Node.js, the toolchain, the sandbox, resource limits, Chromium",
        description="List what grading needs and what is found here, with the command that fixes anything missing.",
        epilog="exit status: 0 everything grading needs is present (Chromium is optional), 1 otherwise",
    )
    doctor.set_defaults(handler=doctor_command)


def doctor_command(args: argparse.Namespace) -> int:
    """Print the checks; exit 0 when grading can run here."""
    from conformance.autograder import doctor

    checks = doctor.run_checks()
    sys.stdout.write(doctor.render(checks))
    return EXIT_READY if doctor.ready(checks) else EXIT_NOT_READY
