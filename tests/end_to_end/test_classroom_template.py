"""The GitHub Classroom template carries its own pi-conformance: its workflow's steps, run by hand, grade 100 per lab.

No package index holds pi-conformance. The template written by ``autograder github-classroom``
carries this version's wheel and the toolchain lock; here its workflow's own install step runs
in a fresh venv (the wheel's dependencies come from the configured index, the toolchain from
npm, as on GitHub's runner), then each lab's command, in a copy of the course's correct project at chapter 07.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.toolchain import LOCK_FOLDER
from tests.support.cli_runner import cli
from tests.support.js_variants import ensure_generated
from tests.support.paths import REPO
from tests.support.requirements import builds_wheel, needs_node, needs_npm

pytestmark = [needs_node, needs_npm, builds_wheel]
COMMAND_GRADER = "classroom-resources/autograding-command-grader@v1"


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(folder), str(REPO)], check=True)
    return next(folder.glob("pi_conformance-*.whl"))


def test_the_template_carries_the_wheel_and_its_workflow_grades_the_course_project_100_per_lab(wheel: Path, tmp_path: Path) -> None:
    template = tmp_path / "template"
    written = cli("autograder", "github-classroom", "--out", str(template), "--wheel", str(wheel))
    assert written.returncode == 0, written.stderr
    carried = template / ".github" / "pi-conformance"
    assert (carried / wheel.name).read_bytes() == wheel.read_bytes()
    for name in ("package.json", "package-lock.json"):
        assert (carried / "toolchain" / name).read_bytes() == (LOCK_FOLDER / name).read_bytes()
    with zipfile.ZipFile(carried / wheel.name) as archive:  # the lock carried is the one the wheel installs from
        assert archive.read("conformance/toolchain/lock/package-lock.json") == (LOCK_FOLDER / "package-lock.json").read_bytes()
    precheck = f"pipx run --spec ./.github/pi-conformance/{wheel.name} pi-conformance check ."
    assert precheck in written.stdout and precheck in (carried / "README.md").read_text(encoding="utf-8")

    document: dict[str, Any] = yaml.safe_load((template / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8"))
    steps = document["jobs"]["run-autograding-tests"]["steps"]
    node = next(step for step in steps if step.get("uses") == "actions/setup-node@v4")
    assert (template / node["with"]["cache-dependency-path"]).is_file()
    install = next(step for step in steps if "toolchain install" in str(step.get("run", "")))["run"]
    assert f"pip install --quiet ./.github/pi-conformance/{wheel.name}" in install

    # The student's repository as Classroom makes it: the template's files plus the student's code.
    repository = shutil.copytree(template, tmp_path / "student")
    # At chapter 09, so every lab of the default rubric is graded (a chapter 04 repository is not charged for 5.x-9.5,
    # and those steps say "not graded": an assignment at chapter 04 takes a rubric of its four labs).
    shutil.copytree(ensure_generated() / "chapter-09", repository, dirs_exist_ok=True)
    venv = tmp_path / "runner-python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "LANG": "C.UTF-8",
    }
    for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE", "npm_config_registry"):
        if key in os.environ:  # the machine's own index settings, as a runner has its own
            env[key] = os.environ[key]
    installed = _run(install, repository, env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    for step in (step for step in steps if step.get("uses") == COMMAND_GRADER):
        ran = _run(step["with"]["command"], repository, env)
        where = f"{step['with']['test-name']}: {shlex.quote(step['with']['command'])}"
        assert ran.returncode == 0, f"{where}\n{ran.stdout[-3000:]}{ran.stderr[-2000:]}"
        lab = step["with"]["test-name"].removeprefix("lab ")
        assert f"check: lab {lab} full" in ran.stdout

    # The students' pre-check, as the template's README and the command print it, from the same
    # repository (pipx from the index, as a student installs it; pi-conformance from the wheel only).
    pipx = _run("python -m pip install --quiet pipx", repository, env)
    assert pipx.returncode == 0, pipx.stdout + pipx.stderr
    student_env = {**env, "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "pipx-bin")}
    checked = _run(precheck.replace("pipx run", "python -m pipx run", 1), repository, student_env)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert all(f"check: lab {lab} full" in checked.stdout for lab in ("3.1", "3.2", "4.1", "4.2")), checked.stdout[-3000:]
