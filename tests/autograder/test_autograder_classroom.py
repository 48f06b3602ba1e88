"""``pi-conformance autograder github-classroom``: the workflow's shape, and its commands run on real projects."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import needs_node

JS = REPO / "tests" / "support" / "js"
COMMAND_GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"


def generate(out: Path, *extra: str) -> dict[str, Any]:
    """The generated workflow, parsed (a YAML document: its nodes are untyped)."""
    written = cli("autograder", "github-classroom", "--out", str(out), *extra)
    assert written.returncode == 0, written.stderr
    document = yaml.safe_load((out / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def steps_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    jobs = document["jobs"]
    assert isinstance(jobs, dict)
    steps = jobs["run-autograding-tests"]["steps"]
    assert isinstance(steps, list)
    return steps


def test_one_test_per_lab_with_its_points_and_a_reporter_that_adds_them(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text('version: 1\nname: two labs\nlabs:\n  "3.1": {weight: 40}\n  "4.1": {weight: 60}\n', encoding="utf-8")
    steps = steps_of(generate(tmp_path / "template", "--rubric", str(rubric), "--install", "pi-conformance @ https://example.org/x.whl"))
    graders = [step for step in steps if step.get("uses") == COMMAND_GRADER]
    assert [(step["id"], step["with"]["max-score"], step["with"]["command"]) for step in graders] == [
        ("lab-3-1", 40, "pi-conformance check . --lab 3.1"),
        ("lab-4-1", 60, "pi-conformance check . --lab 4.1"),
    ]
    install = next(step for step in steps if "toolchain install" in str(step.get("run", "")))
    assert "pip install --quiet 'pi-conformance @ https://example.org/x.whl'" in install["run"]
    assert not list((tmp_path / "template" / ".github" / "pi-conformance").glob("*.whl"))  # hosted: nothing carried
    reporter = steps[-1]
    assert reporter["uses"] == REPORTER and reporter["with"]["runners"] == "lab-3-1,lab-4-1"
    assert reporter["env"] == {
        "LAB-3-1_RESULTS": "${{steps.lab-3-1.outputs.result}}",
        "LAB-4-1_RESULTS": "${{steps.lab-4-1.outputs.result}}",
    }


def test_a_bad_rubric_is_refused(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("version: 1\nlabs: {}\n", encoding="utf-8")
    refused = cli("autograder", "github-classroom", "--out", str(tmp_path / "template"), "--rubric", str(rubric))
    assert refused.returncode == 2 and "not a valid rubric" in refused.stderr


@needs_node
def test_the_workflows_commands_pass_a_correct_project_and_fail_only_the_buggy_lab(tmp_path: Path) -> None:
    graders = [step for step in steps_of(generate(tmp_path / "template", "--install", "unused")) if step.get("uses") == COMMAND_GRADER]
    assert len(graders) == 20
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO)}
    passed: dict[str, dict[str, bool]] = {}
    for name in ("variants/chapter-09", "variants/requests-by-reference"):
        repository = shutil.copytree(JS / name, tmp_path / "students" / Path(name).name)
        passed[name] = {}
        for step in graders:
            command = step["with"]["command"]
            ran = subprocess.run(command, shell=True, cwd=repository, env=env, capture_output=True, text=True, timeout=300)
            passed[name][step["with"]["test-name"]] = ran.returncode == 0
            assert "held-out cases your course may grade with are NOT part of this check" in ran.stdout
            if ran.returncode != 0 and "not graded: the project is at chapter 04" not in ran.stdout:
                assert "hint:" in ran.stdout  # the grader's own feedback, in the run log
    later = {
        f"lab {lab}": True
        for lab in ("5.1", "5.2", "5.3", "6.1", "6.2", "6.3", "7.1", "7.2", "7.3", "7.4", "7.5", "9.1", "9.2", "9.3", "9.4", "9.5")
    }
    assert passed["variants/chapter-09"] == {"lab 3.1": True, "lab 3.2": True, "lab 4.1": True, "lab 4.2": True, **later}
    # The bug is charged once, in lab 4.1, as grade charges it: lab 4.2's cases that fail because of it cost nothing.
    # The project is at chapter 04: the steps of chapters 05-09 are not earned (a classroom's steps are the rubric's labs).
    not_started = dict.fromkeys(later, False)
    assert passed["variants/requests-by-reference"] == {"lab 3.1": True, "lab 3.2": True, "lab 4.1": False, "lab 4.2": True, **not_started}
