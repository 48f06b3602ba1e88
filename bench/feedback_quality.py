"""What a student reads first, per one-bug project: the first featured case, its divergence and its hint.

Usage: python bench/feedback_quality.py [--cache FILE] [--regrade]

Grades every one-bug variant of ``tests/support/js/variants`` and the misbehaving projects of
``tests/support/grading_batch.py`` (hangs, crashes on import), then prints per project the first
case a report shows in full with its first line, reading and hint, the class overview's largest
failure groups, the causes each project's report shows (one per bug is the aim: issue 37) and
the points each one-bug project loses. Grading is cached in ``--cache``
(a pickle, default under the system's temporary folder) so the rendering can be compared
before and after a change of the feedback code without grading again. Needs Node.js.
"""

from __future__ import annotations

import argparse
import pickle
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: make `conformance` and `tests` importable

from conformance.feedback.featured import failure_groups_of, featured_by_lab  # noqa: E402
from conformance.feedback.readings import symptom_reading  # noqa: E402
from conformance.grading.grader import GradeOptions, SubmissionResult, grade_submission, prepare  # noqa: E402
from conformance.grading.rubric import load_rubric  # noqa: E402
from conformance.judging.bearing import fitting_hint  # noqa: E402
from conformance.reports.html.class_site import class_groups  # noqa: E402
from tests.support.grading_batch import BROKEN, make_batch  # noqa: E402

#: Projects of the class that are not one-bug variants but whose feedback matters as much.
MISBEHAVING = ("hangs-in-textof", "crashes-on-import", "never-emits")
EXTRA_VARIANTS = ("sections-always", "sections-before-content", "error-loses-message", "preabort-keeps-turn")


def grade_all(folder: Path) -> dict[str, SubmissionResult]:
    """Grade the one-bug variants and the misbehaving projects (no build: they are compiled)."""
    make_batch(folder, correct_copies=0)
    names = [name for name in BROKEN if not name.startswith("lab")] + list(EXTRA_VARIANTS) + list(MISBEHAVING)
    context = prepare(load_rubric())
    options = GradeOptions(build=False, case_timeout_s=0.5)

    def one(name: str) -> tuple[str, SubmissionResult]:
        path = folder / name if (folder / name).exists() else REPO / "tests" / "support" / "js" / "variants" / name
        return name, grade_submission(f"pi-course:{path}", context, options, name=name)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, names))


def main() -> int:
    """Grade (or load the cache) and print the feedback a student reads first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "pi-feedback-quality.pickle")
    parser.add_argument("--regrade", action="store_true", help="grade again even when the cache exists")
    args = parser.parse_args()
    if shutil.which("node") is None:
        print("needs Node.js", file=sys.stderr)
        return 1
    if args.regrade or not args.cache.exists():
        with tempfile.TemporaryDirectory() as scratch:
            results = grade_all(Path(scratch) / "class")
        args.cache.write_bytes(pickle.dumps(results))
    results = pickle.loads(args.cache.read_bytes())
    context = prepare(load_rubric())
    print("first featured case per project")
    for name, result in results.items():
        featured = [graded for cases in featured_by_lab(result, 2).values() for graded in cases]
        if not featured:
            print(f"  {name}: nothing failed")
            continue
        first = featured[0]
        hint = fitting_hint(first.case, first.outcome)
        message = first.outcome.message.strip().splitlines()[0] if first.outcome.message.strip() else first.outcome.status
        reading = symptom_reading(first.case, first.outcome)
        said = f"\n      reading: {reading}" if reading else ""
        print(f"  {name}: {first.case.id}\n      {message[:160]}{said}\n      hint: {hint}")
    print("\nclass overview: largest groups")
    for group in class_groups(list(results.values()), context.clauses)[:8]:
        print(f"  {group!r}"[:300])
    print("\ncauses per project (its report's failure groups)")
    counts = {name: len(failure_groups_of(result, context.clauses)) for name, result in results.items()}
    for name, count in counts.items():
        print(f"  {name:<26}{count:3}")
    print("  one-bug projects: " + ",".join(str(counts[name]) for name in results if name not in MISBEHAVING))
    print("\npoints lost per project")
    for name, result in results.items():
        print(f"  {name:<26}{result.score.max_points - result.score.points:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
