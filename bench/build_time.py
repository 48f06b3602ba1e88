"""Build time per submission: a course-shaped TypeScript project, copied and built with the pinned toolchain.

Usage: python bench/build_time.py [--runs N] [--sandbox bwrap|none]

Materialises ``tests/support/js/course-ts`` in the course's monorepo shape (no ``node_modules``), then
``--runs`` times: builds it as grading does (throwaway copy, on a capped tmpfs where the grader
is root, ``npm run build``, the pinned TypeScript), and grades the built copy, both in one
submission budget as a grading worker does. Prints the median and best wall time of the build,
of the grading, and the build's share of a submission. Needs Node.js, npm and the toolchain
(``pi-conformance toolchain install``).
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

from conformance import toolchain  # noqa: E402
from conformance.adapters.pi_course import build  # noqa: E402
from conformance.adapters.settings import ImplSettings  # noqa: E402
from conformance.grading.grader import GradeOptions, grade_submission, prepare  # noqa: E402
from conformance.grading.rubric import load_rubric  # noqa: E402
from conformance.isolation.budget import submission_budget  # noqa: E402
from tests.support.course_projects import monorepo  # noqa: E402


def main() -> int:
    """Time the build and the grading of the course-shaped project; one row each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="runs (default 5)")
    parser.add_argument("--sandbox", choices=("bwrap", "none", "auto"), default="auto", help="isolation of the build and the run")
    args = parser.parse_args()
    found = toolchain.status()
    if shutil.which("npm") is None or not found.installed:
        print(f"build_time: needs npm and the toolchain ({found.problem or 'npm is missing'})", file=sys.stderr)
        return 2
    settings = ImplSettings(sandbox=args.sandbox)
    context = prepare(load_rubric(None, "course"))
    builds: list[float] = []
    grades: list[float] = []
    with tempfile.TemporaryDirectory(prefix="pi-bench-build-") as scratch:
        project = monorepo(Path(scratch) / "student")
        for _ in range(args.runs):
            # As a grading worker does: one budget (memory, pids) for the build and the runs; its cost is in the build's time.
            started = time.perf_counter()
            with submission_budget(settings.resource_limits()):
                built = build(project, settings)
                builds.append(time.perf_counter() - started)
                try:
                    if built.report is not None:
                        print(f"build_time: the build failed:\n{built.report}", file=sys.stderr)
                        return 1
                    started = time.perf_counter()
                    impl = f"pi-course:{built.project(project)}"
                    result = grade_submission(impl, context, GradeOptions(settings=settings, build=False))
                    grades.append(time.perf_counter() - started)
                    assert result.score.points == result.score.max_points, "the course project must grade 100"
                finally:
                    built.remove()
    versions = ", ".join(f"{name} {version}" for name, version in found.versions.items())
    print(f"build time per submission ({args.runs} runs, {versions}, sandbox {args.sandbox})")
    for label, times in (("build (copy + npm run build)", builds), ("grading the built copy", grades)):
        print(f"  {label:30} median {statistics.median(times):6.3f} s   best {min(times):6.3f} s")
    share = statistics.median(builds) / (statistics.median(builds) + statistics.median(grades))
    print(f"  the build's share of a submission: {share:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
