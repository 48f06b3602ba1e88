"""``pi-conformance private-set``: write a private grading set drawn from a secret seed."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.commands.checks import EXIT_USAGE
from conformance.commands.options import TIMEOUT
from conformance.model.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:
    from conformance.grading.rubric import Rubric
    from conformance.model.cases import Case

DEFAULT_CASES = 100


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``private-set`` to the command line."""
    parser = commands.add_parser(
        "private-set",
        help="generate a private grading set from a secret seed (fresh inputs, expectations from the reference)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "The same seed writes the same files. Keep the seed and the folder out of the students'\n"
            'repository; grade with them as the held-out set (docs/private-set.md, "A private grading set").\n'
            "Other files in DIR (hand-written private cases) are kept, and no generated case repeats\n"
            "their inputs or a public case's."
        ),
    )
    parser.add_argument("--seed", required=True, metavar="SECRET", help="the secret the cases are drawn from (any text; keep it private)")
    parser.add_argument("--out", required=True, metavar="DIR", help="the folder for DIR/ch03/ to DIR/ch09/, one per chapter drawn")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help="the profile (default: course, the only one with a bundled reference)")
    parser.add_argument("--rubric", metavar="R", help="the rubric whose lab weights share out the cases (default: the shipped one)")
    parser.add_argument(
        "--cases",
        type=int,
        default=DEFAULT_CASES,
        metavar="N",
        help=f"how many cases, at least one per graded lab (default {DEFAULT_CASES})",
    )
    TIMEOUT.add(parser, help=f"{TIMEOUT.keywords['help']}; of the reference's second run of each case")
    parser.set_defaults(handler=private_set_command)


def private_set_command(args: argparse.Namespace) -> int:
    """Generate, write and summarise; 2 on a usage problem."""
    from conformance.common.atomic_file import private_output

    with private_output():  # the set is for staff alone: folders 0700, files 0600
        return _private_set(args)


def _private_set(args: argparse.Namespace) -> int:
    try:
        from conformance.fuzz import private, private_files
    except ImportError as error:  # hypothesis is a development dependency
        from conformance.common.install_hints import extra_command

        print(f"pi-conformance private-set needs hypothesis (the fuzz extra): {extra_command('fuzz')} ({error})", file=sys.stderr)
        return EXIT_USAGE
    from conformance.adapters.reference import create
    from conformance.grading.rubric import RubricError, load_rubric
    from conformance.loading.loader import display_path, load_suite

    if args.profile != DEFAULT_PROFILE:
        print(f"pi-conformance private-set: profile {args.profile!r} has no bundled reference to take expectations from", file=sys.stderr)
        return EXIT_USAGE
    if not args.seed.strip():
        print("pi-conformance private-set: --seed is empty; choose a secret", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.out)
    try:
        rubric = load_rubric(Path(args.rubric) if args.rubric else None, args.profile)
    except RubricError as error:
        print(f"pi-conformance private-set: {error}", file=sys.stderr)
        return EXIT_USAGE
    if out.exists() and not out.is_dir():
        print(f"pi-conformance private-set: --out {out} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    # Public cases and the folder's hand-written ones: no generated case may repeat their inputs.
    taken = list(load_suite(profile=args.profile).cases)
    if out.is_dir():
        own = {display_path(path, out) for path in private_files.generated_files(out)}
        taken += [case for case in load_suite(out, profile=args.profile).cases if case.file not in own]
    # A drawn stream that never ends leaves its consumer task pending when the scenario's loop
    # closes; asyncio logs that at garbage collection. It is the program's design, not an error.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    reference = create()
    try:
        generated = private.generate(reference, rubric, args.seed, args.cases, taken, args.timeout)
        written = private_files.write(generated, out)
        out.chmod(0o700)  # a folder made before, with the usual mode, is closed too
    except private.PrivateSetError as error:
        print(f"pi-conformance private-set: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        reference.close()
    stats = generated.stats
    print(
        f"pi-conformance private-set: {len(generated.all_cases)} cases ({private_files.lab_counts(generated.cases)}) "
        f"from {stats.drawn} programs in {stats.seconds:.1f} s"
    )
    print(
        f"  dropped: {stats.unstable} unstable on the reference, {stats.duplicates} repeating a known input, "
        f"{stats.predictable} drawn for any seed, {stats.weightless} weighing 0 in the rubric, {stats.surplus} for labs already full"
    )
    for path in written:
        print(f"  wrote {path}")
    print(f"  {_table_worth(rubric, list(load_suite(profile=args.profile).cases), generated.all_cases)}")
    return 0


def _table_worth(rubric: Rubric, public: list[Case], held_out: list[Case]) -> str:
    """What a table of public answers (passing every public case, no held-out one) earns under ``rubric`` beside this set."""
    from dataclasses import replace

    from conformance.grading.scoring import score
    from conformance.judging.outcome import Outcome

    graded = replace(rubric, held_out=rubric.held_out | {case.id for case in held_out})
    public_ids = {case.id for case in public}
    results = [(case, Outcome(case.id, "passed" if case.id in public_ids else "failed", "", 0.0)) for case in [*public, *held_out]]
    earned = score(graded, results).points
    rule = "public_cases: confirmed" if rubric.public_cases == "confirmed" else "public_cases: plain"
    return f"a table of public answers would earn {earned:.2f} of {rubric.max_score:.2f} points with this set ({rule})"
