"""The sandbox's cost per submission: grading one course project with ``--sandbox bwrap`` and ``none``.

Usage: python bench/sandbox_cost.py [--runs N] [--build] [PROJECT]

Grades PROJECT (default ``tests/js/course-correct``, every case) with ``grade_submission``
(what ``pi-conformance grade`` runs), alternating the two isolations ``--runs`` times each,
and prints the median and best wall time of each and their ratio. With ``--build`` every
run builds the project first (``npm run build`` in the sandbox, or not). Needs Node.js and,
for the bwrap rows, a working bubblewrap.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: make `conformance` importable

from conformance.adapters.sandbox import probe  # noqa: E402
from conformance.adapters.settings import ImplSettings  # noqa: E402
from conformance.grading.grader import GradeOptions, grade_submission, prepare  # noqa: E402
from conformance.grading.rubric import load_rubric  # noqa: E402


def main() -> int:
    """Time both isolations and print one row each, then the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("project", nargs="?", default=str(REPO / "tests" / "js" / "course-correct"), help="the course project to grade")
    parser.add_argument("--runs", type=int, default=5, help="runs per isolation (default 5)")
    parser.add_argument("--build", action="store_true", help="build the project in every run")
    args = parser.parse_args()
    if shutil.which("node") is None:
        print("sandbox_cost: Node.js is needed", file=sys.stderr)
        return 2
    reason = probe()
    if reason is not None:
        print(f"sandbox_cost: {reason}", file=sys.stderr)
        return 2
    context = prepare(load_rubric())
    times: dict[str, list[float]] = {"none": [], "bwrap": []}
    for _ in range(args.runs):
        for isolation in times:  # alternated, so load on the machine hits both alike
            options = GradeOptions(settings=ImplSettings(sandbox=isolation), build=args.build)  # type: ignore[arg-type]
            started = time.perf_counter()
            result = grade_submission(f"pi-course:{args.project}", context, options)
            times[isolation].append(time.perf_counter() - started)
            if result.status != "ok":
                print(f"sandbox_cost: {isolation}: {result.status}: {result.detail}", file=sys.stderr)
                return 1
    print(f"{len(context.cases)} cases, {args.runs} runs each, build={'yes' if args.build else 'no'}")
    print(f"{'sandbox':>8}  {'median s':>8}  {'best s':>7}")
    for isolation, values in times.items():
        print(f"{isolation:>8}  {statistics.median(values):>8.3f}  {min(values):>7.3f}")
    ratio = statistics.median(times["bwrap"]) / statistics.median(times["none"])
    extra = statistics.median(times["bwrap"]) - statistics.median(times["none"])
    print(f"ratio bwrap/none (medians): {ratio:.2f}x, {extra * 1000:+.0f} ms per submission")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
