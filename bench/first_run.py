"""The first run of a fresh install: a new venv from the wheel, an empty cache, ``run --impl reference``.

Usage: python bench/first_run.py [--wheel FILE] [--rounds N] [--target SECONDS]

Builds this checkout's wheel (or takes ``--wheel``), then, each round, makes a new venv from it
and times, from a folder outside the checkout with a new empty cache: ``pi-conformance --version``,
the cold first ``run --impl reference`` and a second, warm one. "suite" is the time pytest reports
for the suite itself ("N passed in X s"); "wall" is the whole process, interpreter start included.
Exit status 1 when the median cold suite time is over ``--target`` (default 1 s).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUITE_TIME = re.compile(r"passed in ([0-9.]+)s")


def build_wheel(into: Path) -> Path:
    """This checkout's wheel, built with the proof of its checked fixtures (hatch_build.py)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(into), str(REPO)], check=True)
    return next(into.glob("pi_conformance-*.whl"))


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float | None]:
    """Wall seconds of ``command`` and the suite time it printed (None when it printed none)."""
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"first_run: {' '.join(command)} exited {result.returncode}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    found = SUITE_TIME.findall(result.stdout)
    return wall, float(found[-1]) if found else None


def one_round(wheel: Path, scratch: Path) -> dict[str, tuple[float, float | None]]:
    """One fresh venv: the three timings."""
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", str(wheel)], check=True)
    elsewhere = scratch / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(scratch), "PI_CONFORMANCE_CACHE": str(scratch / "cache"), "LANG": "C.UTF-8"}
    program = str(venv / "bin" / "pi-conformance")
    return {
        "--version": timed([program, "--version"], elsewhere, env),
        "cold first run": timed([program, "run", "--impl", "reference"], elsewhere, env),
        "warm run": timed([program, "run", "--impl", "reference"], elsewhere, env),
    }


def main() -> int:
    """Time the rounds; print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--wheel", type=Path, help="the wheel to install (default: built from this checkout)")
    parser.add_argument("--rounds", type=int, default=3, help="fresh venvs (default 3)")
    parser.add_argument("--target", type=float, default=1.0, help="the cold suite time not to exceed (default 1 s)")
    args = parser.parse_args()
    rows: dict[str, list[tuple[float, float | None]]] = {}
    with tempfile.TemporaryDirectory(prefix="pi-bench-first-") as work:
        wheel = args.wheel or build_wheel(Path(work) / "wheels")
        for number in range(args.rounds):
            scratch = Path(work) / f"round-{number}"
            scratch.mkdir()
            for label, timing in one_round(wheel, scratch).items():
                rows.setdefault(label, []).append(timing)
    print(f"first run from a fresh venv ({args.rounds} rounds, {wheel.name}); medians")
    for label, times in rows.items():
        suites = [suite for _, suite in times if suite is not None]
        suite = f"   suite {statistics.median(suites):6.3f} s" if suites else ""
        walls = [wall for wall, _ in times]
        print(f"  {label:16} wall {statistics.median(walls):6.3f} s{suite}")
    cold = [suite for _, suite in rows["cold first run"] if suite is not None]
    if not cold or statistics.median(cold) > args.target:
        print(f"first_run: the cold first run's suite time is over the {args.target:g} s target", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
