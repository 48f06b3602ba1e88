"""What the suite costs beyond pytest itself, and how it scales: every ratio in one run.

Usage: python bench/suite_overhead.py [--rounds N] [--impl SPEC ...] [--scales 1,10,100] [--scale-rounds N] [--cold-scales 1,10]

Each row is a whole ``pi-conformance run`` process (start-up included). The rows run
alternately, round after round, so a slower moment of the machine is shared by all of them;
the table shows the medians of wall time and of CPU time (user + system, children
included: the ``cmd:`` and ``pi-course:`` programs count). The floor is a plain ``pytest -q``
of one file with as many trivial parametrized tests as the suite has cases.

The scaling series runs the reference in process on 1x, 10x and 100x copies of the bundled
fixtures (each copy's ids suffixed) through ``--fixtures``, with a warm parsed cache and
with a cold one. Every run uses a private cache folder, never the user's.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
TRIVIAL = """
import pytest

@pytest.mark.parametrize("n", range({count}))
def test_trivial(n):
    assert n >= 0
"""
# A case's id line: top-level list items of ``cases`` (indented by at most two spaces).
CASE_ID = re.compile(r"^( {0,2}- id: *)([a-z0-9-]+)", re.MULTILINE)
TARGETS = {"in process": 1.5, "cmd:": 2.0, "pi-course:": 2.5}
SUITE = REPO / "conformance" / "suite"
# The suite as it would be without pytest-cases: the same cases, marks and checks as plain
# ``pytest.param`` values. Timed next to the real suite module to show what pytest-cases costs.
PLAIN_SUITE = """
import pytest

from conformance.commands.pytest_plugin import case_parameters, check_case


@pytest.mark.parametrize("entry", case_parameters())
def test_case(entry, conformance_adapter, conformance_state):
    check_case(entry, conformance_adapter, conformance_state)
"""


@dataclass
class Row:
    name: str
    command: list[str]
    cwd: Path
    env: dict[str, str]
    prepare: Callable[[], None] | None = None
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    codes: set[int] = field(default_factory=set)

    def run(self) -> None:
        if self.prepare is not None:
            self.prepare()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(self.command, cwd=self.cwd, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        self.walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        self.codes.add(done.returncode)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)


def count_cases(root: Path) -> int:
    """Cases of the course profile under ``root`` (what ``run`` collects by default)."""
    sys.path.insert(0, str(REPO))
    from conformance.loading.loader import load_suite

    suite = load_suite(root)
    return len(suite.cases) + len(suite.broken)


def copy_fixtures(target: Path, copies: int) -> None:
    """``copies`` copies of the bundled fixtures under ``target``, the ids of copy n suffixed ``-xN``."""
    for number in range(copies):

        def suffixed(match: re.Match[str], n: int = number) -> str:
            return f"{match[1]}{match[2]}-x{n}"

        for source in FIXTURES.rglob("*.y*ml"):
            text = source.read_text(encoding="utf-8")
            if copies > 1:
                text = CASE_ID.sub(suffixed, text)
            destination = target / f"copy{number}" / source.relative_to(FIXTURES)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(text, encoding="utf-8")


def environment(cache: Path) -> dict[str, str]:
    return {**os.environ, "PI_CONFORMANCE_CACHE": str(cache)}


def run_command(impl: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "conformance.cli", "run", "--impl", impl, *extra]


def alternate(rows: list[Row], rounds: int) -> None:
    for row in rows:  # one untimed run each (not of cold rows): caches warm, files in the page cache
        if row.prepare is None:
            row.run()
            row.walls.clear()
            row.cpus.clear()
    for _ in range(rounds):
        for row in rows:
            row.run()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of the ratio table (default 5)")
    parser.add_argument("--impl", action="append", default=None, help="implementations to time (default: reference, cmd:, pi-course:)")
    parser.add_argument("--scales", default="1,10,100", help="copies of the fixtures to scale to (default 1,10,100; empty: none)")
    parser.add_argument("--scale-rounds", type=int, default=3, help="runs per scale and cache state (default 3)")
    parser.add_argument("--cold-scales", default=None, help="the scales also timed with a cold cache (default: every scale)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="pi-bench-") as folder:
        work = Path(folder)
        count = count_cases(FIXTURES)
        (work / "floor").mkdir()
        (work / "floor" / "test_trivial.py").write_text(TRIVIAL.format(count=count), encoding="utf-8")
        warm = environment(work / "cache")
        floor_command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        rows = [Row("floor: pytest -q, trivial tests", floor_command, work / "floor", warm)]
        impls = args.impl or [
            "reference",
            f"cmd:{sys.executable} -m conformance.server --impl reference",
            *(["pi-course:tests/support/js/course-correct"] if shutil.which("node") else []),
        ]
        for impl in impls:
            rows.append(Row(label(impl), run_command(impl), REPO, warm))
        rows += pytest_cases_rows(work, warm)
        alternate(rows, args.rounds)
        print(f"cases: {count}; {args.rounds} alternating rounds; medians")
        print(f"{'run':<52} {'wall s':>7} {'CPU s':>7} {'wall/floor':>10} {'CPU/floor':>9} {'target':>7}  exit")
        floor = rows[0]
        for row in rows:
            target = next((f"<= {limit:g}" for prefix, limit in TARGETS.items() if row.name.startswith(prefix)), "")
            codes = ",".join(str(code) for code in sorted(row.codes))
            ratios = f"{row.wall / floor.wall:>10.2f} {row.cpu / floor.cpu:>9.2f}"
            print(f"{row.name:<52} {row.wall:>7.3f} {row.cpu:>7.3f} {ratios} {target:>7}  {codes}")
        scales = [int(scale) for scale in args.scales.split(",") if scale.strip()]
        if scales:
            print()
            print(f"scaling, reference in process, {args.scale_rounds} runs each (medians); targets: Nx <= 1.05 * N * (1x)")
            print(f"{'copies':>6} {'cases':>7} {'cache':>5} {'wall s':>8} {'CPU s':>8} {'wall / 1x':>10} {'target':>8}  exit")
            base: dict[str, float] = {}
            for scale in scales:
                fixtures = work / f"fixtures-{scale}x"
                copy_fixtures(fixtures, scale)
                command = run_command("reference", "--fixtures", str(fixtures))
                cold_cache = work / f"cold-{scale}"
                warm_row = Row(f"{scale}x warm", command, REPO, environment(work / f"warm-{scale}"))
                forget = lambda c=cold_cache: shutil.rmtree(c, True)  # noqa: E731
                cold_row = Row(f"{scale}x cold", command, REPO, environment(cold_cache), prepare=forget)
                cold = args.cold_scales is None or str(scale) in args.cold_scales.split(",")
                timed = [warm_row, cold_row] if cold else [warm_row]
                alternate(timed, args.scale_rounds)
                for state, row in (("warm", warm_row), ("cold", cold_row))[: len(timed)]:
                    base.setdefault(state, row.wall)
                    ratio = row.wall / base[state]
                    codes = ",".join(str(code) for code in sorted(row.codes))
                    target = f"<= {1.05 * scale:g}" if scale > 1 and state == "warm" else ""
                    print(f"{scale:>6} {count * scale:>7} {state:>5} {row.wall:>8.3f} {row.cpu:>8.3f} {ratio:>10.2f} {target:>8}  {codes}")
                shutil.rmtree(fixtures)


def pytest_cases_rows(work: Path, env: dict[str, str]) -> list[Row]:
    """The suite through plain pytest twice: its own module (pytest-cases) and the same cases as ``pytest.param``."""
    plain = work / "plain-suite"
    plain.mkdir()
    shutil.copy(SUITE / "conftest.py", plain / "conftest.py")
    (plain / "test_conformance.py").write_text(PLAIN_SUITE, encoding="utf-8")
    options = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "--assert=plain", "-q", "--tb=no", "--impl", "reference"]
    return [
        Row("pytest-cases: pytest conformance/suite", [sys.executable, "-m", "pytest", str(SUITE), *options], REPO, env),
        Row("no pytest-cases: same cases as pytest.param", [sys.executable, "-m", "pytest", str(plain), *options], REPO, env),
    ]


def label(impl: str) -> str:
    if impl == "reference":
        return "in process: run --impl reference"
    return impl.replace(sys.executable, "python")


if __name__ == "__main__":
    main()
