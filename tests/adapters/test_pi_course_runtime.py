"""``pi-course:PATH?runtime=bun``: the course adapter under bun (issue 26: the Node adapters run under bun as well as Node).

The build still uses Node.js's npm and the pinned toolchain; only the adapter that imports the
compiled modules runs under the other runtime. The option never reaches the submission's name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters.kinds import parse_impl
from conformance.adapters.pi_course import CourseLayoutError, split_runtime, with_runtime
from tests.support.cli_runner import cli
from tests.support.course_projects import monorepo
from tests.support.paths import REPO
from tests.support.requirements import needs_bun


def test_the_runtime_option_is_split_from_the_path() -> None:
    assert split_runtime("/class/alice") == ("/class/alice", "node")
    assert split_runtime("/class/alice?runtime=bun") == ("/class/alice", "bun")
    assert split_runtime("/class/what?") == ("/class/what?", "node")  # a "?" of the path itself
    assert with_runtime("/copy/alice", "bun") == "/copy/alice?runtime=bun" and with_runtime("/copy/alice", "node") == "/copy/alice"
    with pytest.raises(CourseLayoutError, match="runtime='deno': use one of node, bun"):
        split_runtime("/class/alice?runtime=deno")


def test_the_option_does_not_change_the_submissions_name() -> None:
    assert parse_impl("pi-course:/class/alice?runtime=bun").name == "alice"
    assert parse_impl("pi-ai:/class/bob?package=@fork/ai&runtime=bun").name == "bob"


def test_a_missing_runtime_is_one_line(tmp_path: Path) -> None:
    result = cli(
        "grade", "--impl", f"pi-course:{REPO / 'tests' / 'support' / 'js' / 'course-correct'}?runtime=bun", env={"PATH": "/usr/bin:/bin"}
    )
    assert "status   invalid: pi-course: runtime=bun needs 'bun' on PATH, and none was found" in result.stdout, result.stdout


@needs_bun
def test_a_course_project_is_built_with_node_and_graded_under_bun(tmp_path: Path) -> None:
    project = monorepo(tmp_path / "alice")
    result = cli("grade", "--impl", f"pi-course:{project}?runtime=bun", timeout=300)
    assert "pi-conformance grade: alice" in result.stdout
    assert "total    100.00 / 100.00" in result.stdout, result.stdout + result.stderr
