"""``pi-conformance fuzz``: differential fuzzing of an implementation against the reference."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.adapters.kinds import BUILT_KINDS, IMPL_FORMS, PROCESS_GROUP, Impl, ImplSpecError, parse_impl
from conformance.commands.checks import EXIT_USAGE
from conformance.commands.options import TIMEOUT, add_process_options, process_settings

if TYPE_CHECKING:  # hypothesis comes with the fuzz extra only: imported when the command runs
    from conformance.adapters.interface import Adapter
    from conformance.fuzz.engine import Finding
    from conformance.model.cases import Case
    from conformance.running.engine import AdapterFactory

EXIT_FOUND = 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``fuzz`` to the command line."""
    fuzz = commands.add_parser(
        "fuzz",
        help="draw random cases, run them on the reference and on an implementation, and report the first divergence as a case",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "The emitted case's expected values are the reference's observation: check each one against\n"
            "spec/spec.md before committing it.\n\n"
            "exit status: 0 no divergence within the budget, 1 a divergence was found, 2 usage error\n\n"
            "implementations (--impl):\n  " + "\n  ".join(IMPL_FORMS)
        ),
    )
    fuzz.add_argument("--impl", type=parse_impl, required=True, help="the implementation to compare with the reference")
    fuzz.add_argument("--seconds", type=float, default=60.0, help="time budget for finding a divergence (default 60)")
    fuzz.add_argument(
        "--examples", type=int, metavar="N", help="also stop after N programs: with the same seed, the same run on any machine"
    )
    fuzz.add_argument("--shrink-seconds", type=float, default=30.0, help="time budget for shrinking it (default 30)")
    fuzz.add_argument("--seed", type=int, default=0, help="random seed (default 0): the same seed draws the same programs")
    fuzz.add_argument("--emit", metavar="DIR", help="write the shrunk case as DIR/chNN/<id>.yaml, then lint it and run it from disk")
    TIMEOUT.add(fuzz)
    process = fuzz.add_argument_group(PROCESS_GROUP)
    add_process_options(process)
    process.add_argument("--build", action="store_true", help=f"{BUILT_KINDS} run the project's build first")
    fuzz.set_defaults(handler=fuzz_command)


def suite_failures(fresh: AdapterFactory, timeout_s: float | None = None) -> list[str]:
    """Ids of the bundled course cases the implementation ``fresh`` starts fails or errors (skipped ones aside).

    Run by the engine's loop, as ``run`` and ``grade`` run them (given-up cases retried
    alone), so the count matches what ``run`` would report.
    """
    from conformance.loading.loader import load_suite
    from conformance.running.engine import Loop, Policy

    cases = load_suite().cases
    outcomes = Loop(Policy(timeout_s=timeout_s), fresh).run(fresh(), cases)
    return [outcome.case_id for outcome in outcomes if outcome.status in ("failed", "errored")]


def fuzz_command(args: argparse.Namespace) -> int:
    """Fuzz; print the divergence and the case; 1 when one was found."""
    try:
        from conformance.fuzz.engine import Differ, fuzz
    except ImportError as error:  # hypothesis comes with the fuzz extra only
        from conformance.common.install_hints import extra_command

        print(f"pi-conformance fuzz needs hypothesis (the fuzz extra): {extra_command('fuzz')} ({error})", file=sys.stderr)
        return EXIT_USAGE
    from conformance.adapters.reference import create

    impl: Impl = args.impl
    settings = process_settings(args, build=args.build)
    try:
        implementation = impl.adapter(settings)
    except ImplSpecError as error:
        print(f"pi-conformance fuzz: {error}", file=sys.stderr)
        return EXIT_USAGE
    reference = create()
    started = time.perf_counter()
    # A drawn stream that never ends leaves its consumer task pending when the scenario's loop
    # closes; asyncio logs that at garbage collection. It is the program's design, not an error.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    try:
        differ = Differ(reference, implementation, args.timeout, fresh=lambda: impl.adapter(settings))
        finding = fuzz(differ, args.seconds, args.seed, shrink_seconds=args.shrink_seconds, max_examples=args.examples)
        stats = differ.stats
        if finding is None:
            elapsed = time.perf_counter() - started
            print(f"pi-conformance fuzz: no divergence from the reference in {stats.examples} programs ({elapsed:.1f} s)")
            return 0
        _print_finding(args, finding, stats.examples, reference, implementation, lambda: impl.adapter(settings))
        return EXIT_FOUND
    finally:
        implementation.close()
        reference.close()


def _print_finding(
    args: argparse.Namespace, finding: Finding, examples: int, reference: Adapter, implementation: Adapter, fresh: AdapterFactory
) -> None:
    """The divergence, whether the suite already fails the implementation (``fresh`` starts it), and the case (printed or emitted)."""
    from conformance.fuzz.emit import description, fixture_text

    divergence = finding.outcome.message.splitlines()[0] if finding.outcome.message else finding.outcome.status
    case = finding.case
    name = getattr(implementation, "name", args.impl.spec)
    case = type(case)(**{**case.__dict__, "description": description(name, divergence)})
    print(
        f"pi-conformance fuzz: divergence after {finding.first_divergence_s:.1f} s "
        f"({examples} programs, shrunk in {finding.shrink_s:.1f} s)\n"
        f"  {case.id} (lab {case.lab}, {', '.join(case.clauses)}): {divergence}"
    )
    known = suite_failures(fresh)
    if known:
        # The finding may be one the suite already reports: say so, so nobody files it as new.
        print(
            f"  note: the bundled suite already fails {len(known)} case(s) of {name} "
            f"(e.g. {', '.join(known[:3])}); this divergence may be one of those: "
            f"pi-conformance run --impl {args.impl} first"
        )
    if args.emit:
        _emit(Path(args.emit), case, name, reference, implementation)
    else:
        print(fixture_text(case))


def _emit(folder: Path, case: Case, name: str, reference: Adapter, implementation: Adapter) -> None:
    """Write the case into ``folder``, then lint it and run it from disk on both implementations."""
    from conformance.fuzz.emit import check_emitted, write_case

    path = write_case(case, folder)
    check = check_emitted(path, case.id, reference, implementation)
    print(f"  wrote {path}")
    print(
        f"  check: fixtures lint {'clean' if not check.lint_problems else 'FAILED'}, "
        f"reference {check.reference_status}, {name} {check.implementation_status}"
    )
    for problem in check.lint_problems:
        print(f"    {problem}")
    print("  The expected values are the reference's: check them against spec/spec.md before committing the case.")
