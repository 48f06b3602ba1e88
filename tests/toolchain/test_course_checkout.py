"""The course's own code at a commit, rebuilt as a student repository, passes every case of the chapters it has reached.

Opt-in: the course's code is not in this repository (its text stays the course's). Point
``PI_COURSE_REPO`` at a git clone of ``unofn/pi`` and the test takes, as the course's
``npm run practice`` does, ``git archive <commit> package.json packages/pi-course`` into a
throwaway folder (no ``node_modules``, no ``dist``), then grades it with the default rubric:
the build's staff files and pinned toolchain, the sandbox and limits, as for a student.

    PI_COURSE_REPO=~/src/pi pytest tests/toolchain/test_course_checkout.py
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from conformance.grading.grader import grade_submission, prepare
from conformance.grading.rubric import load_rubric
from tests.support.requirements import needs_node, needs_toolchain

COURSE_REPO = os.environ.get("PI_COURSE_REPO")
pytestmark = [
    needs_node,
    needs_toolchain,
    pytest.mark.skipif(COURSE_REPO is None, reason="PI_COURSE_REPO (a clone of unofn/pi) is not set"),
]

#: Commits of unofn/pi and what the course's code there earns: chapter 05 done (provider-adapter.ts and its focused
#: test: labs 3.1-5.3, 175 points), chapter 06 done (tool.ts and its focused test, written after chapter 05: all ten
#: labs, 250 points), chapter 07 done (agent-loop.ts, chapter 07's loop, and its focused test: labs 3.1-7.5, 375
#: points; the case chapter 09 supersedes is graded here), chapter 09 done (agent.ts and the loop's chapter 09
#: additions: all twenty labs, 500 points; the one chapter 07 case chapter 09 supersedes is not graded).
COMMITS = {
    "035d7c9": ("05", 175.0),
    "14ae333": ("06", 250.0),
    "bf8e846": ("07", 375.0),
    "0454269": ("09", 500.0),
}


def _checkout(commit: str, target: Path) -> Path:
    """The course repository's root files and ``packages/pi-course`` at ``commit``, in ``target``."""
    archive = subprocess.run(
        ["git", "-C", str(COURSE_REPO), "archive", "--format=tar", commit, "package.json", "packages/pi-course"],
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    assert not (target / "node_modules").exists() and not (target / "packages" / "pi-course" / "dist").exists()
    return target


@pytest.mark.parametrize("commit", sorted(COMMITS))
def test_the_courses_code_at_a_commit_gets_full_marks(commit: str, tmp_path: Path) -> None:
    chapter, points = COMMITS[commit]
    project = _checkout(commit, tmp_path / "student")
    result = grade_submission(f"pi-course:{project}", prepare(load_rubric()))
    failing = [f"{graded.case.id}: {graded.outcome.message}" for graded in result.score.cases if not graded.passed]
    assert failing == [] and (result.status, result.score.points, result.score.max_points) == ("ok", points, points)
    assert result.chapter.startswith(f"chapter {chapter}: ")
