"""The sandbox's and the resource limits' cost per submission: one course project graded each way.

Usage: python bench/sandbox_cost.py [--runs N] [--build] [PROJECT]

Grades PROJECT (default ``tests/support/js/course-correct``, every case) with ``grade_submission``
(what ``pi-conformance grade`` runs) three ways, alternated ``--runs`` times: no sandbox and
no limits, bwrap without limits (``--no-limits``), and bwrap with the default limits. Prints
the median and best wall time and the median CPU time (the grader and its children) of each,
and what the sandbox and the limits add. With ``--build`` every run builds the project first.
Needs Node.js and a working bubblewrap.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: make `conformance` importable

from conformance.adapters.settings import ImplSettings  # noqa: E402
from conformance.grading.grader import GradeOptions, grade_submission, prepare  # noqa: E402
from conformance.grading.rubric import load_rubric  # noqa: E402
from conformance.isolation.limits import describe, detect  # noqa: E402
from conformance.isolation.sandbox import probe  # noqa: E402


def _cpu_s() -> float:
    """CPU seconds of this process and its reaped children so far."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def main() -> int:
    """Time each way and print one row each, then what the sandbox and the limits add."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "project", nargs="?", default=str(REPO / "tests" / "support" / "js" / "course-correct"), help="the course project to grade"
    )
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
    ways = {
        "none": ImplSettings(sandbox="none", limits=False),
        "bwrap": ImplSettings(sandbox="bwrap", limits=False),
        "bwrap+limits": ImplSettings(sandbox="bwrap"),
    }
    wall: dict[str, list[float]] = {name: [] for name in ways}
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.runs):
        for name, settings in ways.items():  # alternated, so load on the machine hits all alike
            options = GradeOptions(settings=settings, build=args.build)
            started, before = time.perf_counter(), _cpu_s()
            result = grade_submission(f"pi-course:{args.project}", context, options)
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(_cpu_s() - before)
            if result.status != "ok":
                print(f"sandbox_cost: {name}: {result.status}: {result.detail}", file=sys.stderr)
                return 1
    print(f"{len(context.cases)} cases, {args.runs} runs each, build={'yes' if args.build else 'no'}")
    print(f"limits: {describe(ImplSettings().resource_limits(), True, detect())}")
    print(f"{'way':>12}  {'median s':>8}  {'best s':>7}  {'cpu s':>6}")
    for name in ways:
        print(f"{name:>12}  {statistics.median(wall[name]):>8.3f}  {min(wall[name]):>7.3f}  {statistics.median(cpu[name]):>6.3f}")
    for label, slower, faster in (("sandbox", "bwrap", "none"), ("limits", "bwrap+limits", "bwrap")):
        extra = statistics.median(wall[slower]) - statistics.median(wall[faster])
        extra_cpu = statistics.median(cpu[slower]) - statistics.median(cpu[faster])
        print(f"{label} adds {extra * 1000:+.0f} ms wall, {extra_cpu * 1000:+.0f} ms CPU per submission (medians)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
