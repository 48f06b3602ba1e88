"""The grader decides how a submission is built (issue 32, item 7): staff files pinned, the grader's own tsc.

On main before the fix the build was the submission's own ``npm run build``: a build script
``tsc -p tsconfig.json || true`` turned a type error's 0.00 into 100.00 for the same code, and
a ``node_modules`` link survived the copy, so the student's own ``tsc`` was the one on the
script's path. Both drills graded 100.00 there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.grading.rubric import DEFAULT_RUBRIC, RubricError, load_rubric
from conformance.isolation.staff_build import COURSE_FILES, DEFAULT_PINS, StaffBuild, pin_files
from tests.support.attack_projects import copy_project
from tests.support.cli_runner import cli
from tests.support.course_projects import single_package
from tests.support.requirements import needs_node, needs_npm, needs_toolchain

TYPE_ERROR = '\nexport const broken: number = "not a number";\n'
BUILD_FAILED = "status   build-failed: tsc -p tsconfig.json exited with status 2: src/types.ts"


def compiles(test: Callable[..., None]) -> Callable[..., None]:
    """Mark ``test`` as one that builds with the pinned compiler (Node.js, npm and the toolchain)."""
    marked: Callable[..., None] = needs_node(needs_npm(needs_toolchain(test)))
    return marked


def set_build_script(package: Path, script: str) -> None:
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["build"] = script
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")


def add_type_error(package: Path) -> None:
    types = package / "src" / "types.ts"
    types.write_text(types.read_text(encoding="utf-8") + TYPE_ERROR, encoding="utf-8")


def with_broken_sources(project: Path) -> Path:
    """``project``'s package with ``src/types.ts`` holding a type error (its compiled modules still pass); the package."""
    package = project / "packages" / "pi-course"
    (package / "src").mkdir()
    (package / "src" / "types.ts").write_text("export const answer: number = 42;" + TYPE_ERROR, encoding="utf-8")
    return package


def grade(project: Path, *options: str) -> str:
    result = cli("grade", "--impl", f"pi-course:{project}", "--sandbox", "none", *options, timeout=300)
    return result.stdout + result.stderr


@compiles
def test_a_build_script_that_ignores_tscs_status_still_fails_on_a_type_error(tmp_path: Path) -> None:
    project = single_package(tmp_path / "or-true")
    add_type_error(project)
    set_build_script(project, "tsc -p tsconfig.json || true")
    output = grade(project)
    assert BUILD_FAILED in output and "error TS2322" in output, output
    assert "total      0.00 / 100.00" in output


@compiles
def test_a_linked_node_modules_with_the_students_own_tsc_never_compiles(tmp_path: Path) -> None:
    # Compiled modules that pass every case, sources with a type error, and a "tsc" of the
    # student's that says all is well: on main its link survived the copy and npm ran it.
    project = copy_project(tmp_path / "own-tsc")
    package = with_broken_sources(project)
    (package / "tsconfig.json").write_text((COURSE_FILES / "tsconfig.json").read_text(encoding="utf-8"), encoding="utf-8")
    set_build_script(package, "tsc -p tsconfig.json")
    fake = project / "my-modules" / ".bin" / "tsc"
    fake.parent.mkdir(parents=True)
    ran = tmp_path / "student-tsc-ran"
    fake.write_text(f"#!/bin/sh\ntouch {ran}\nexit 0\n", encoding="utf-8")
    fake.chmod(0o755)
    (package / "node_modules").symlink_to("../../my-modules", target_is_directory=True)
    output = grade(project)
    assert BUILD_FAILED in output, output
    assert not ran.exists()


@compiles
def test_deleting_the_packages_package_json_does_not_skip_the_type_check(tmp_path: Path) -> None:
    # A guard of the grader's own build rather than a drill of main (whose npm then failed on the
    # root package.json's missing script): the sources decide that the package is compiled.
    project = copy_project(tmp_path / "no-manifest")
    (with_broken_sources(project) / "package.json").unlink()
    assert BUILD_FAILED in grade(project)


@compiles
def test_staff_files_named_in_the_rubric_replace_the_submissions(tmp_path: Path) -> None:
    # The submission's tsconfig checks nothing; the staff's (from the rubric) checks everything.
    project = single_package(tmp_path / "lax")
    add_type_error(project)
    (project / "tsconfig.json").write_text(json.dumps({"compilerOptions": {"noEmit": True}, "files": []}), encoding="utf-8")
    staff = tmp_path / "staff"
    staff.mkdir()
    strict = json.loads((COURSE_FILES / "tsconfig.json").read_text(encoding="utf-8"))
    (staff / "tsconfig.json").write_text(json.dumps(strict), encoding="utf-8")
    rubric = staff / "rubric.yaml"
    rubric.write_text(DEFAULT_RUBRIC.read_text(encoding="utf-8") + "build: {pin: {tsconfig.json: tsconfig.json}}\n", encoding="utf-8")
    assert BUILD_FAILED in grade(project, "--rubric", str(rubric))
    # Pinning nothing builds with the submission's own tsconfig: its empty file list compiles nothing, and fails.
    rubric.write_text(DEFAULT_RUBRIC.read_text(encoding="utf-8") + "build: {pin: {}}\n", encoding="utf-8")
    assert "status   build-failed: tsc -p tsconfig.json exited with status" in grade(project, "--rubric", str(rubric))


def test_the_default_rubric_pins_the_courses_package_json_and_tsconfig_and_runs_the_graders_tsc() -> None:
    build = load_rubric().build
    assert build.command == "tsc" and build.pinned == DEFAULT_PINS == ("package.json", "tsconfig.json")
    shipped = json.loads((COURSE_FILES / "tsconfig.json").read_text(encoding="utf-8"))
    # What the course repository's packages/pi-course/tsconfig.json says (unofn/pi), and its layout: src/ into dist/.
    assert shipped["compilerOptions"]["strict"] is True and shipped["compilerOptions"]["outDir"] == "dist"
    assert shipped["include"] == ["src/**/*.ts", "test/**/*.ts"]
    assert json.loads((COURSE_FILES / "package.json").read_text(encoding="utf-8"))["type"] == "module"


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("{command: make}", "build.command"),
        ("{pin: {../outside.json: x}}", "build.pin.../outside.json: not a relative path inside the package folder"),
        ("{pin: {/etc/passwd: x}}", "not a relative path inside the package folder"),
        ("{pin: {node_modules/.bin/tsc: x}}", "no path through .git or node_modules can be pinned"),
        ("{pin: {tsconfig.json: missing.json}}", "build.pin.tsconfig.json: cannot read"),
        ("{pin: {scripts/build.mjs: shipped}}", "'shipped' names the course's own copy"),
        ("{pins: {}}", "build"),
    ],
)
def test_a_build_rule_that_cannot_be_used_is_a_rubric_error_naming_the_key(rule: str, problem: str, tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(DEFAULT_RUBRIC.read_text(encoding="utf-8") + f"build: {rule}\n", encoding="utf-8")
    with pytest.raises(RubricError, match="not a valid rubric") as raised:
        load_rubric(rubric)
    assert problem in str(raised.value)


def test_pins_are_read_relative_to_the_rubric_and_shipped_names_the_course_copy(tmp_path: Path) -> None:
    (tmp_path / "staff-build.mjs").write_text("// staff\n", encoding="utf-8")
    rubric = tmp_path / "rubric.yaml"
    rule = "build: {command: npm-run-build, pin: {package.json: shipped, scripts/build.mjs: staff-build.mjs}}\n"
    rubric.write_text(DEFAULT_RUBRIC.read_text(encoding="utf-8") + rule, encoding="utf-8")
    build = load_rubric(rubric).build
    assert build == StaffBuild(
        (("package.json", (COURSE_FILES / "package.json").read_bytes()), ("scripts/build.mjs", b"// staff\n")), "npm-run-build"
    )


def test_a_staff_file_is_never_written_through_a_link_of_the_submissions(tmp_path: Path) -> None:
    package = tmp_path / "copy"
    (package / "elsewhere").mkdir(parents=True)
    (package / "scripts").symlink_to("elsewhere", target_is_directory=True)
    (package / "tsconfig.json").symlink_to("elsewhere/tsconfig.json")
    pin_files(package, StaffBuild((("tsconfig.json", b"{}"), ("scripts/build.mjs", b"// staff\n"))))
    assert not (package / "tsconfig.json").is_symlink() and (package / "tsconfig.json").read_bytes() == b"{}"
    assert not (package / "scripts").is_symlink() and (package / "scripts" / "build.mjs").read_bytes() == b"// staff\n"
    assert list((package / "elsewhere").iterdir()) == []
