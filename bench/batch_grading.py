"""Batch grading time per submission, with one and with several submissions graded at once.

Usage: python bench/batch_grading.py [--jobs 1 2 ...] [--correct-copies N] [--timeout S] [--no-build]

Generates the test class of ``tests/support/grading_batch.py`` (correct copies, every broken
variant, a failing build, two hanging, one crashing and one empty submission) in a
temporary folder, then grades it with ``grade_batch`` (what ``pi-conformance grade-batch``
runs) once per ``--jobs`` value. Each row: wall time, wall time per submission, the
speed-up over the first row, and the median and slowest single submission (from the
submissions' own durations). Needs Node.js.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: make `conformance` and `tests` importable

from conformance.farm.batch import BatchOptions, discover_submissions, grade_batch  # noqa: E402
from conformance.grading.grader import GradeOptions, prepare  # noqa: E402
from conformance.grading.rubric import load_rubric  # noqa: E402
from tests.support.grading_batch import make_batch  # noqa: E402


def main() -> int:
    """Run the benchmark and print one row per ``--jobs`` value."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="parallelism levels to time (default: 1 2)")
    parser.add_argument("--correct-copies", type=int, default=5, help="correct submissions in the class (default 5)")
    parser.add_argument("--timeout", type=float, default=None, help="per-operation timeout (default: the grader's, 1 s)")
    parser.add_argument("--no-build", action="store_true", help="skip the build step")
    args = parser.parse_args()
    if shutil.which("node") is None:
        print("batch_grading: Node.js is needed", file=sys.stderr)
        return 2
    context = prepare(load_rubric())
    with tempfile.TemporaryDirectory(prefix="pi-batch-bench-") as scratch:
        root = Path(scratch) / "class"
        make_batch(root, correct_copies=args.correct_copies)
        submissions = discover_submissions(root)
        options = GradeOptions(build=not args.no_build, case_timeout_s=args.timeout)
        print(f"{len(submissions)} submissions, {len(context.cases)} cases each, build={'no' if args.no_build else 'yes'}")
        print(f"{'jobs':>4}  {'wall s':>7}  {'s/submission':>12}  {'speed-up':>8}  {'median one s':>12}  {'slowest one s':>13}")
        baseline: float | None = None
        for jobs in args.jobs:
            started = time.perf_counter()
            results = grade_batch(submissions, context, BatchOptions(grade=options, jobs=jobs))
            wall = time.perf_counter() - started
            baseline = baseline or wall
            durations = [result.duration_s for result in results]
            print(
                f"{jobs:>4}  {wall:>7.1f}  {wall / len(results):>12.2f}  {baseline / wall:>7.2f}x  "
                f"{statistics.median(durations):>12.2f}  {max(durations):>13.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
