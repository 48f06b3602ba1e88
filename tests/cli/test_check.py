"""``pi-conformance check``: a student's check before they submit, lab by lab, public cases only."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from conformance.commands.check import HELD_OUT_NOTE
from conformance.loading.loader import load_suite
from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import needs_node

JS = REPO / "tests" / "support" / "js"
pytestmark = needs_node


def project(name: str, tmp_path: Path) -> Path:
    """A copy of a test project (a student's repository; the check may build into it)."""
    return Path(shutil.copytree(JS / name, tmp_path / Path(name).name))


def test_a_correct_project_is_full_in_every_lab(tmp_path: Path) -> None:
    checked = cli("check", str(project("course-correct", tmp_path)))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    lines = checked.stdout.splitlines()
    assert lines[0] == f"pi-conformance check: {HELD_OUT_NOTE}." and lines[-1] == f"check: {HELD_OUT_NOTE}."
    assert [line.split(" (")[0] for line in lines if line.startswith("check: lab")] == [
        f"check: lab {lab} full" for lab in ("3.1", "3.2", "4.1", "4.2")
    ]


def test_one_bug_fails_its_lab_only_with_the_graders_feedback(tmp_path: Path) -> None:
    buggy = project("variants/requests-by-reference", tmp_path)
    its_lab = cli("check", str(buggy), "--lab", "4.1")
    assert its_lab.returncode == 1
    # The bug fails 11 cases of lab 4.1, however many cases the lab has.
    lab_size = sum(1 for case in load_suite().cases if case.lab == "4.1")
    assert f"check: lab 4.1 NOT full ({lab_size - 11}/{lab_size} public cases passed)" in its_lab.stdout
    assert "hint:    If requests shows changes the caller made after calling stream()" in its_lab.stdout
    assert "lab 3.1" not in its_lab.stdout
    other_lab = cli("check", str(buggy), "--lab", "3.1")
    assert other_lab.returncode == 0 and "check: lab 3.1 full" in other_lab.stdout and "lab 4.1" not in other_lab.stdout
    assert cli("check", str(buggy)).returncode == 1


def test_a_build_that_fails_is_not_full(tmp_path: Path) -> None:
    checked = cli("check", str(project("variants/build-fails", tmp_path)), "--lab", "3.1")
    assert checked.returncode == 1
    assert "build output:" in checked.stdout and "check: lab 3.1 NOT full" in checked.stdout


def test_check_needs_a_folder(tmp_path: Path) -> None:
    checked = cli("check", str(tmp_path / "missing"))
    assert checked.returncode == 2 and "is not a folder" in checked.stderr


def test_without_bubblewrap_a_student_reads_what_the_missing_sandbox_means_for_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.commands import check
    from conformance.isolation import sandbox

    monkeypatch.setattr(sandbox, "probe", lambda: "bwrap is not installed")
    monkeypatch.setattr(sandbox, "_warned", False)
    monkeypatch.setattr(sandbox, "_notice", sandbox.staff_notice)
    check.check_command(argparse.Namespace(project="/nonexistent"))  # check speaks to a student before anything runs
    capsys.readouterr()
    assert sandbox.choose_isolation("auto") == "none"
    said = capsys.readouterr().err
    assert "your code runs here without the sandbox the grader uses (bwrap is not installed)" in said
    assert "like running `npm test`" in said and "Linux only" in said and "--sandbox none" in said
    for staff_words in ("kill the grader", "other submissions", "read the fixtures", "WARNING"):
        assert staff_words not in said
    sandbox.use_notice(sandbox.staff_notice)
    monkeypatch.setattr(sandbox, "_warned", False)
    assert sandbox.choose_isolation("auto") == "none"
    assert "kill the grader" in capsys.readouterr().err  # grade and run keep the staff's warning
