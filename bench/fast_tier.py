"""How long the fast tier (``make test-fast``) takes, against its goal: under 60 s of wall time on 2 cores.

Usage: python bench/fast_tier.py [--target SECONDS] [--workers N]

One run of ``pytest -n N --dist loadgroup -m FAST_TIER`` (``tests/support/requirements.py``),
as ``make test-fast`` runs it, after nothing else: the validation cache (``.cache/validation``)
is whatever the checkout has, as it is for someone working on a stage. It prints the wall time,
the CPU time (user + system of pytest and its workers) and the tests run. The wall time is the
number judged, since the goal is how long one waits; on a machine shared with other work read
the CPU time too, which says how much of the wait is the neighbours'. Exit status 1 when the
tests fail or the wall time is over ``--target`` (default 60 s, issue 34).
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.requirements import FAST_TIER  # noqa: E402  (the checkout's tests, not an installed package)


def main() -> int:
    """Run the fast tier once; print its times; fail on failures or over the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--target", type=float, default=60.0, help="the wall time not to exceed (default 60 s)")
    parser.add_argument("--workers", default="auto", help="pytest-xdist workers (default auto, as make test-fast)")
    args = parser.parse_args()
    command = [sys.executable, "-m", "pytest", "-n", args.workers, "--dist", "loadgroup", "-q", "-p", "no:cacheprovider", "-m", FAST_TIER]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    summary = next((line for line in reversed(done.stdout.splitlines()) if re.search(r"\d+ (passed|failed)", line)), "no summary")
    print(f"fast tier (-m {FAST_TIER!r}, -n {args.workers})")
    print(f"  wall {wall:6.1f} s  cpu {cpu:6.1f} s  {summary.strip('= ')}")
    failed = False
    if done.returncode != 0:
        print(done.stdout[-4000:], file=sys.stderr)
        print("fast_tier: the fast tier did not pass", file=sys.stderr)
        failed = True
    if wall > args.target:
        print(f"fast_tier: the wall time is over the {args.target:g} s target", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
