"""One class of JavaScript submissions, graded once per session and read by several test modules.

``tests/farm/test_grading_batch.py`` checks its gradebook and report folders, ``tests/reports/test_html_class.py``
its HTML site. Grading the class is the most expensive thing the tests do (every submission is
built, the hanging ones are retried case by case), so it is done once, with everything both
need: ``grade-batch --jobs 2 --timeout 0.5 --out OUT --html SITE``.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.cli_runner import cli
from tests.support.grading_batch import Expected, make_batch
from tests.support.requirements import require

#: Identical correct copies in the class: enough to show that equal work grades equally.
CORRECT_COPIES = 3


@dataclass(frozen=True)
class GradedClass:
    """The generated submissions, what each must grade to, and how ``grade-batch`` went."""

    root: Path
    expected: dict[str, Expected]
    result: subprocess.CompletedProcess[str]
    wall_s: float

    @property
    def out(self) -> Path:
        """The gradebook and report folders."""
        return self.root / "out"

    @property
    def site(self) -> Path:
        """The HTML site."""
        return self.root / "site"


def grade_class(root: Path) -> GradedClass:
    """Generate the class under ``root / "submissions"`` and grade it with reports and a site."""
    # --jobs 2 needs a sandbox (without one, classmates would share a uid: grade-batch refuses).
    require("needs_bwrap")
    expected = make_batch(root / "submissions", correct_copies=CORRECT_COPIES)
    started = time.monotonic()
    result = cli(
        "grade-batch",
        str(root / "submissions"),
        "--jobs",
        "2",
        "--timeout",
        "0.5",
        "--out",
        str(root / "out"),
        "--html",
        str(root / "site"),
        timeout=600,
    )
    return GradedClass(root, expected, result, time.monotonic() - started)
