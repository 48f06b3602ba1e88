"""The ``pi-conformance`` command line: each subcommand lives in its own module.

Only the module of the subcommand being run is imported (grading, authoring and fuzzing
pull in much that ``run`` never needs); ``--help`` and unknown commands import them all.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from conformance import __version__

# Each module adds its subcommand(s) and sets ``handler`` on the parsed arguments.
SUBCOMMAND_MODULES = ("run", "fixtures", "grade", "fuzz", "private_set", "matrix", "toolchain", "doctor", "check", "autograder")
# The subcommands each module adds, so that a command line imports only its own module.
COMMAND_MODULE = {
    "run": "run",
    "fixtures": "fixtures",
    "grade": "grade",
    "grade-batch": "grade",
    "gradebook-merge": "grade",
    "fuzz": "fuzz",
    "private-set": "private_set",
    "matrix": "matrix",
    "compat": "matrix",
    "toolchain": "toolchain",
    "doctor": "doctor",
    "check": "check",
    "autograder": "autograder",
}


def _requested_module(argv: Sequence[str]) -> str | None:
    """The module of the subcommand named on the command line (its first word not an option)."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return COMMAND_MODULE.get(first) if first is not None else None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``pi-conformance``: every subcommand, or only the one ``argv`` names."""
    parser = argparse.ArgumentParser(prog="pi-conformance", description="Check an implementation of the course's chapters 03-04.")
    parser.add_argument("--version", action="version", version=f"pi-conformance {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    wanted = _requested_module(argv) if argv is not None else None
    # A bare --version prints and exits while parsing: no subcommand's module is needed for it.
    version_only = argv is not None and wanted is None and "--version" in argv and not {"-h", "--help"} & set(argv)
    for name in () if version_only else (wanted,) if wanted is not None else SUBCOMMAND_MODULES:
        importlib.import_module(f"conformance.commands.{name}").register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pi-conformance`` console script."""
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(words).parse_args(words)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
