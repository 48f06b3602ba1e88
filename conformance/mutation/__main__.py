"""``python -m conformance.mutation``: the mutation score of the suite (``make mutation``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from conformance.mutation.runner import mutants_of_reference, run_mutants, sample
from conformance.mutation.score_report import EQUIVALENTS_FILE, MIN_SCORE, MutationReport, build_report, load_declared


def main(argv: Sequence[str] | None = None) -> int:
    """Run the mutants, write the report, exit 0 when the score and the equivalents hold."""
    args = _parser().parse_args(argv)
    mutants = mutants_of_reference()
    if args.list:
        for mutant in mutants:
            print(f"{mutant.id}\t{mutant.diff}")
        return 0
    if args.module:
        unknown = sorted(set(args.module) - {mutant.module for mutant in mutants})
        if unknown:
            known = ", ".join(sorted({mutant.module for mutant in mutants}))
            print(f"mutation: no module {', '.join(unknown)} in reference_impl; its modules: {known}", file=sys.stderr)
            return 2
        mutants = [mutant for mutant in mutants if mutant.module in args.module]
    selected = sample(mutants, args.sample, args.seed) if args.sample else mutants
    started = time.perf_counter()
    verdicts = run_mutants(selected, args.jobs, _progress(started), Path(args.fixtures) if args.fixtures else None)
    # A sample or a module's mutants say nothing of the others: no stale-entry check then.
    report = build_report(selected, verdicts, load_declared(Path(args.equivalents)), complete=not (args.sample or args.module))
    Path(args.report).write_text(json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    _print_report(report, args, started)
    _print_failures(report, args)
    return 0 if report.passes(args.min_score) and not report.stale else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m conformance.mutation", description=__doc__)
    parser.add_argument("--sample", type=int, help="run only this many mutants, drawn with --seed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--module",
        action="append",
        default=[],
        help="run only the mutants of this reference_impl module (its name, e.g. agent_loop); repeatable",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: one per core)")
    parser.add_argument("--report", default="mutation-report.json", help="where to write the JSON report")
    parser.add_argument("--equivalents", default=str(EQUIVALENTS_FILE), help="the declared equivalent mutants (YAML)")
    parser.add_argument("--min-score", type=float, default=MIN_SCORE)
    parser.add_argument("--fixtures", help="fixtures folder (default: the bundled fixtures)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    return parser


def _progress(started: float) -> Callable[[int, int], None]:
    """A progress callback that prints every 50 mutants, and at the end, on stderr."""

    def progress(done: int, total: int) -> None:
        if done % 50 == 0 or done == total:
            print(f"  {done}/{total} mutants, {time.perf_counter() - started:.0f} s", file=sys.stderr)

    return progress


def _print_report(report: MutationReport, args: argparse.Namespace, started: float) -> None:
    """The score, the kills per operator, every survivor and every stale equivalent entry."""
    print(
        f"mutation: {report.killed}/{report.total} killed, {report.equivalent} declared equivalent: "
        f"score {report.score:.1%} of the killable in {time.perf_counter() - started:.0f} s; report in {args.report}"
    )
    for name, counts in sorted(report.operators.items()):
        print(f"  {name:18} {counts['killed']:4}/{counts['total']:<4}")
    for entry in report.survived:
        marker = "undeclared" if entry["id"] in report.undeclared else "gap" if entry["id"] in report.gaps else "equivalent"
        print(f"  survived ({marker}): {entry['id']}: {entry['diff']}")
    for stale in report.stale:
        print(f"  stale entry in {args.equivalents}: {stale} (no longer a surviving mutant; remove it)")


def _print_failures(report: MutationReport, args: argparse.Namespace) -> None:
    """Why the run fails, if it does: a low score, undeclared survivors, known fixture gaps."""
    if report.score < args.min_score:
        print(f"mutation: FAILED: score {report.score:.1%} is below {args.min_score:.0%}")
    if report.undeclared:
        print(f"mutation: FAILED: {len(report.undeclared)} survivor(s) not declared in {args.equivalents}")
    if report.gaps:
        print(f"mutation: FAILED: {len(report.gaps)} survivor(s) are known fixture gaps; add their cases (see {args.equivalents})")


if __name__ == "__main__":
    raise SystemExit(main())
