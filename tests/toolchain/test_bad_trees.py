"""Bad trees are one result, never a crash (issue 32): ``grade`` on a tree it cannot copy still writes its reports.

On main before the fix, a 1,500-level tree exhausted Python's stack in the recursive copy
(``RecursionError``) and a 5,000-character path hit the kernel's limit (``OSError: File name
too long``): ``grade`` exited with a traceback and wrote no report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.adapters import course_build
from conformance.adapters.settings import ImplSettings
from conformance.cli import main
from conformance.isolation.submission_copy import MAX_COPY_DEPTH, MAX_COPY_PATH_CHARS, copy_submission
from tests.support.bad_trees import deep_copy, long_path_copy, nested_folders, scratch_fixture
from tests.support.cli_runner import cli
from tests.support.requirements import needs_node, needs_npm, needs_toolchain

pytestmark = [needs_node, needs_npm, needs_toolchain]
_scratch = scratch_fixture()


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (deep_copy, f"folders nested more than {MAX_COPY_DEPTH} deep"),
        (long_path_copy, f"a path longer than {MAX_COPY_PATH_CHARS} characters"),
    ],
    ids=["1500-levels", "5000-characters"],
)
def test_grade_on_a_tree_it_cannot_copy_writes_every_report_with_the_reason(
    make: Callable[[Path], Path], reason: str, scratch: Path
) -> None:
    project = make(scratch / "project")
    reports = {name: scratch / f"report.{name}" for name in ("json", "markdown", "junit")}
    options = [item for name, path in reports.items() for item in (f"--{name}", str(path))]
    result = cli("grade", "--impl", f"pi-course:{project}", "--sandbox", "none", *options, timeout=300)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"status   build-failed: the submission is too large to build: {reason}" in result.stdout
    report = json.loads(reports["json"].read_text(encoding="utf-8"))
    assert report["status"] == "build-failed" and reason in report["detail"]
    assert reason in reports["markdown"].read_text(encoding="utf-8")
    assert reports["junit"].read_text(encoding="utf-8").startswith("<?xml")


def test_a_build_that_leaves_a_tree_too_deep_for_rmtree_is_still_removed(scratch: Path) -> None:
    source = scratch / "small"
    (source / "dist").mkdir(parents=True)
    workspace = scratch / "workspace"
    copy_submission(source, workspace)
    nested_folders(workspace, 3000, "d")  # what a build could write: past the recursion limit of shutil.rmtree
    course_build.Workspace(workspace, workspace).remove()
    assert not workspace.exists()


def test_a_copy_that_raises_os_error_is_not_buildable_with_the_reason(scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(source: Path, target: Path) -> None:
        raise PermissionError(13, "Permission denied", str(source / "secret"))

    monkeypatch.setattr(course_build, "copy_submission", refuse)
    project = scratch / "project"
    (project / "package.json").parent.mkdir(parents=True)
    (project / "package.json").write_text("{}", encoding="utf-8")
    built = course_build.build_in_copy(project, project, "node", ImplSettings(sandbox="none"))
    assert built.report == f"the submission cannot be copied to build it: [Errno 13] Permission denied: '{project / 'secret'}'"
    assert built.workspace is None


def test_grade_writes_its_reports_even_when_grading_raises(
    scratch: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.commands import grade

    def explode(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(grade, "grade_submission", explode)
    report = scratch / "report.json"
    code = main(["grade", "--impl", "reference", "--json", str(report)])
    assert code == 1
    expected = "status   crashed: the grader failed on this submission: RecursionError: maximum recursion depth exceeded"
    assert expected in capsys.readouterr().out
    assert json.loads(report.read_text(encoding="utf-8"))["status"] == "crashed"
