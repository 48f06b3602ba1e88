"""How long ``pi-conformance fixtures lint`` takes on the whole tree, and whether it says the same every time.

Usage: python bench/lint_time.py [--rounds N] [--target SECONDS] [--fixtures DIR]

Each round is a whole ``fixtures lint`` process (interpreter start included), after one warm-up
round that is not counted (warm: the interpreter's files and the .pyc files are in the page
cache; lint itself reads no cache of checked files). The table shows the median, best and worst
CPU time (user + system) and wall time. CPU time is the number judged: on a machine shared with
other work the wall time says more about the neighbours than about lint. Exit status 1 when the
median CPU time is over ``--target`` (default 2 s, issue 38), or when two rounds printed different
problems or exited differently.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_round(command: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """(CPU seconds, wall seconds, exit status, standard output) of one lint process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall, done.returncode, done.stdout


def main() -> int:
    """Time the rounds; print the medians; fail over the target or on differing answers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds after one warm-up (default 5)")
    parser.add_argument("--target", type=float, default=2.0, help="the median CPU time not to exceed (default 2 s)")
    parser.add_argument("--fixtures", type=Path, help="the fixtures folder to lint (default: the checkout's)")
    args = parser.parse_args()
    command = [sys.executable, "-m", "conformance.cli", "fixtures", "lint"]
    if args.fixtures is not None:
        command += ["--fixtures", str(args.fixtures)]
    with tempfile.TemporaryDirectory(prefix="pi-bench-lint-") as cache:
        # A private cache folder: lint reads none, and nothing it might write lands in the user's.
        env = {**os.environ, "PI_CONFORMANCE_CACHE": cache}
        one_round(command, env)
        rounds = [one_round(command, env) for _ in range(args.rounds)]
    cpus = [cpu for cpu, _, _, _ in rounds]
    walls = [wall for _, wall, _, _ in rounds]
    answers = {(code, output) for _, _, code, output in rounds}
    problems = len(rounds[0][3].splitlines())
    print(f"fixtures lint on {args.fixtures or 'fixtures/'} ({args.rounds} rounds after a warm-up; {problems} lines printed)")
    print(f"  cpu  median {statistics.median(cpus):6.3f} s  best {min(cpus):6.3f} s  worst {max(cpus):6.3f} s")
    print(f"  wall median {statistics.median(walls):6.3f} s  best {min(walls):6.3f} s  worst {max(walls):6.3f} s")
    print(f"  answers: {'the same every round' if len(answers) == 1 else f'{len(answers)} different ones'}")
    failed = False
    if len(answers) != 1:
        print("lint_time: rounds printed different problems or exited differently", file=sys.stderr)
        failed = True
    if statistics.median(cpus) > args.target:
        print(f"lint_time: the median CPU time is over the {args.target:g} s target", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
