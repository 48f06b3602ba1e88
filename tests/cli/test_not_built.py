"""``run --impl pi-course:PATH`` on a project that is not built: one line that says so, not one skip per case."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_runner import cli
from tests.support.course_projects import monorepo, single_package


def test_an_unbuilt_course_project_is_one_line_that_names_build(tmp_path: Path) -> None:
    for shape in (monorepo, single_package):
        project = shape(tmp_path / shape.__name__)
        ran = cli("run", "--impl", f"pi-course:{project}")
        assert ran.returncode == 2, ran.stdout + ran.stderr
        lines = ran.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pi-conformance run: this project is not built: pass `--build`"), ran.stderr
        assert "not found" not in ran.stdout


def test_a_folder_that_is_no_project_and_a_built_one_are_not_told_to_build(tmp_path: Path) -> None:
    empty = cli("run", "--impl", f"pi-course:{tmp_path}")
    assert "not built" not in empty.stderr
    project = monorepo(tmp_path / "built")
    built = project / "packages" / "pi-course" / "dist" / "src"
    built.mkdir(parents=True)
    (built / "types.js").write_text("export const nothing = 1;\n", encoding="utf-8")
    partly = cli("run", "--impl", f"pi-course:{project}", "--lab", "3.1")
    assert "not built" not in partly.stderr
