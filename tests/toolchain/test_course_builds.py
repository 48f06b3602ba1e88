"""Course-shaped TypeScript projects, submitted without node_modules, build with the pinned toolchain.

The shapes mirror the course repository (``tests/support/course_projects.py``): ``"types": ["node"]``
and no devDependencies in ``packages/pi-course``. Before the toolchain shipped
``@types/node``, both graded 0/100 with ``error TS2688: Cannot find type definition file for 'node'``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.grading.rubric import load_rubric
from conformance.loading.loader import load_suite
from tests.support.cli_runner import cli
from tests.support.course_projects import monorepo, single_package
from tests.support.requirements import needs_bwrap, needs_node, needs_npm, needs_toolchain

#: The cases the default rubric grades for course-ts, a repository at chapter 04 (a new case must not break these tests).
ALL = len([case for case in load_suite().cases if case.lab in load_rubric().labs and case.chapter <= "04"])

pytestmark = [needs_node, needs_npm, needs_toolchain]
SHAPES: dict[str, Callable[[Path], Path]] = {"monorepo": monorepo, "single-package": single_package}
SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_course_shaped_project_without_node_modules_grades_100(shape: str, sandbox: str, tmp_path: Path) -> None:
    project = SHAPES[shape](tmp_path / "student")
    result = cli("grade", "--impl", f"pi-course:{project}", "--sandbox", sandbox, timeout=300)
    assert f"total    100.00 / 100.00  {ALL}/{ALL} passed" in result.stdout, result.stdout + result.stderr
    assert not (project / "dist").exists() and not (project / "packages" / "pi-course" / "dist").exists()


def test_a_type_error_in_the_course_project_fails_its_build_with_the_compilers_message(tmp_path: Path) -> None:
    project = monorepo(tmp_path / "student")
    types = project / "packages" / "pi-course" / "src" / "types.ts"
    types.write_text(types.read_text(encoding="utf-8") + '\nexport const broken: number = "text";\n', encoding="utf-8")
    result = cli("grade", "--impl", f"pi-course:{project}", "--sandbox", "none", timeout=300)
    assert result.returncode == 1
    assert "status   build-failed: tsc -p tsconfig.json exited with status 2: src/types.ts" in result.stdout, result.stdout
    assert "error TS2322" in result.stdout
