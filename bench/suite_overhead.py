"""How long the suite takes against an implementation, next to a trivial pytest run of as many tests.

Usage: python bench/suite_overhead.py [--repeat N] [--impl SPEC ...]

Each row is the median wall time of N runs of ``pi-conformance run`` (a fresh process each
time, start-up included). The first ratio is to a plain pytest run of the same number of
trivial parametrized tests (what the suite costs beyond pytest itself); the second is to
the in-process reference run (what a transport costs). By default the rows are the
reference in process, the reference over ``cmd:``, and the project's JavaScript course
implementation over ``pi-course:`` (when Node.js is installed).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TRIVIAL = """
import pytest

@pytest.mark.parametrize("n", range({count}))
def test_trivial(n):
    assert n >= 0
"""


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def median_time(command: list[str], cwd: Path, repeat: int) -> float:
    return statistics.median(timed(command, cwd) for _ in range(repeat))


def case_count() -> int:
    sys.path.insert(0, str(REPO))
    from conformance.loader import load_suite

    suite = load_suite()
    return len(suite.cases) + len(suite.broken)


def default_impls() -> list[str]:
    impls = ["reference", f"cmd:{sys.executable} -m conformance.server --impl reference"]
    if shutil.which("node"):
        impls.append("pi-course:tests/js/course-correct")
    return impls


def label(impl: str) -> str:
    return impl.replace(sys.executable, "python")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--impl", action="append", default=None, help="implementations to time (default: reference)")
    args = parser.parse_args()
    count = case_count()
    with tempfile.TemporaryDirectory() as folder:
        trivial = Path(folder) / "test_trivial.py"
        trivial.write_text(TRIVIAL.format(count=count), encoding="utf-8")
        baseline = median_time([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(trivial)], Path(folder), args.repeat)
    print(f"cases: {count}, runs per row: {args.repeat} (median wall time)")
    print(f"{'run':<72} {'seconds':>8} {'/pytest':>8} {'/in-process':>11}")
    print(f"{'pytest, trivial tests':<72} {baseline:>8.3f} {1.0:>8.2f} {'':>11}")
    in_process: float | None = None
    for impl in args.impl or default_impls():
        seconds = median_time([sys.executable, "-m", "conformance.cli", "run", "--impl", impl], REPO, args.repeat)
        in_process = in_process or seconds
        name = "pi-conformance --impl " + label(impl)
        print(f"{name:<72} {seconds:>8.3f} {seconds / baseline:>8.2f} {seconds / in_process:>11.2f}")


if __name__ == "__main__":
    main()
