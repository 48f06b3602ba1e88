"""The ``pi-conformance`` command line: each subcommand lives in its own module."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from conformance import __version__
from conformance.commands import fixtures, fuzz, grade, matrix, run

# Each module adds its subcommand(s) and sets ``handler`` on the parsed arguments.
SUBCOMMANDS = (run, fixtures, grade, fuzz, matrix)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pi-conformance``."""
    parser = argparse.ArgumentParser(prog="pi-conformance", description="Check an implementation of the course's chapters 03-04.")
    parser.add_argument("--version", action="version", version=f"pi-conformance {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pi-conformance`` console script."""
    args = build_parser().parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
