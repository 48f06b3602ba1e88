"""What users install: the wheel, in a fresh virtualenv outside the checkout, grades course projects.

The wheel is built from this checkout, installed into a new venv in a folder every user can
read (so ``--run-as`` can be tried too), and run from outside the checkout: its toolchain
comes from the lock shipped inside the wheel, into a cache of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.grading.rubric import load_rubric
from conformance.loading.loader import load_suite
from tests.support.build_rules import own_script_rubric
from tests.support.course_projects import monorepo, single_package
from tests.support.paths import REPO
from tests.support.requirements import builds_wheel, needs_bwrap, needs_node, needs_npm

#: Every bundled course case (a new case must not break these tests).
ALL = len(load_suite().cases)
#: What grade charges course-ts, a repository at chapter 04 (chapter 06's labs are left out for it).
GRADED = len([case for case in load_suite().cases if case.lab in load_rubric().labs and case.chapter <= "04"])

pytestmark = [
    needs_node,
    needs_npm,
    builds_wheel,
    # One worker builds and installs it once; the tests below share it.
    pytest.mark.xdist_group("installed-wheel"),
]
#: A system Python outside /root, so that an unprivileged --run-as user can run the venv's interpreter.
SYSTEM_PYTHON = next((path for path in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(path, os.X_OK)), sys.executable)


class Installed:
    """A venv holding the wheel, with its toolchain, and a neutral folder to run it from."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.venv = root / "venv"
        self.toolchain = root / "toolchain"
        self.elsewhere = root / "elsewhere"

    def run(self, *args: str, timeout: float = 300, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": f"{self.venv / 'bin'}:{os.environ['PATH']}",
            "HOME": os.environ.get("HOME", "/root"),
            "PI_CONFORMANCE_TOOLCHAIN": str(self.toolchain),
            "LANG": "C.UTF-8",
            **({"PI_CONFORMANCE_CACHE": str(cache)} if cache is not None else {}),
        }
        return subprocess.run(
            [str(self.venv / "bin" / "pi-conformance"), *args],
            cwd=self.elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


def _step(command: list[str], cwd: Path) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


@pytest.fixture(scope="module")
def installed() -> Iterator[Installed]:
    root = Path(tempfile.mkdtemp(prefix="pi-wheel-"))
    root.chmod(0o755)  # readable by a --run-as user, like /opt on a grading host
    try:
        wheels = root / "wheels"
        _step([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(REPO)], root)
        wheel = next(wheels.glob("pi_conformance-*.whl"))
        here = Installed(root)
        here.elsewhere.mkdir()
        _step([SYSTEM_PYTHON, "-m", "venv", str(here.venv)], root)
        _step([str(here.venv / "bin" / "pip"), "install", "--quiet", str(wheel)], root)
        result = here.run("toolchain", "install")
        assert result.returncode == 0, result.stdout + result.stderr
        yield here
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_wheel_ships_the_toolchain_lock_and_reports_it(installed: Installed) -> None:
    result = installed.run("toolchain", "status")
    assert result.returncode == 0, result.stderr
    assert f"toolchain: {installed.toolchain}" in result.stdout
    assert "installed: typescript 7.0.2, @types/node" in result.stdout
    assert str(REPO) not in installed.run("--version").stdout + result.stdout


def test_the_first_run_of_the_bundled_suite_reads_the_shipped_proof_and_checks_no_file_again(installed: Installed, tmp_path: Path) -> None:
    cache = tmp_path / "empty-cache"
    result = installed.run("run", "--impl", "reference", cache=cache)
    assert f"{ALL} passed" in result.stdout, result.stdout + result.stderr
    assert not cache.exists() or not list(cache.iterdir())  # every file answered by the proof: nothing parsed, nothing stored
    copy = tmp_path / "copy" / "fixtures"
    shutil.copytree(REPO / "fixtures", copy)
    elsewhere = installed.run("run", "--impl", "reference", "--fixtures", str(copy), cache=cache)
    assert f"{ALL} passed" in elsewhere.stdout, elsewhere.stdout + elsewhere.stderr
    assert list(cache.glob("parsed-*"))  # fixtures outside the wheel were checked (and remembered)


@pytest.mark.parametrize("shape", [monorepo, single_package], ids=["monorepo", "single-package"])
def test_the_installed_wheel_grades_a_course_project_without_node_modules_100(installed: Installed, shape: object, tmp_path: Path) -> None:
    project = shape(tmp_path / "student")  # type: ignore[operator]
    result = installed.run("grade", "--impl", f"pi-course:{project}")
    assert f"total    100.00 / 100.00  {GRADED}/{GRADED} passed" in result.stdout, result.stdout + result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="--run-as needs the grader to run as root")
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_the_installed_wheel_grades_as_an_unprivileged_user_who_cannot_read_root_files(installed: Installed, sandbox: str) -> None:
    project = monorepo(installed.root / f"student-{sandbox}")
    secret = installed.root / f"source-{sandbox}"
    secret.mkdir(mode=0o700)
    (secret / "held-out.yaml").write_text("the held-out set\n", encoding="utf-8")
    # The build tries to read the secret into a folder anyone may write to.
    drop = installed.root / f"drop-{sandbox}"
    drop.mkdir()
    drop.chmod(0o777)
    package = project / "packages" / "pi-course"
    manifest = (package / "package.json").read_text(encoding="utf-8")
    leak = f"(cat {secret}/held-out.yaml; id -u) > {drop}/leaked.txt 2>&1; tsc -p tsconfig.json"
    (package / "package.json").write_text(manifest.replace('"tsc -p tsconfig.json"', f'"{leak}"'), encoding="utf-8")
    for folder, _, _ in os.walk(project):
        os.chmod(folder, 0o755)
    # The subject is what the build script can reach: the rubric has the submission's own script run.
    rubric = own_script_rubric(installed.root)
    arguments = ["--run-as", "nobody", "--sandbox", sandbox, "--rubric", str(rubric)]
    result = installed.run("grade", "--impl", f"pi-course:{project}", *arguments)
    assert f"total    100.00 / 100.00  {GRADED}/{GRADED} passed" in result.stdout, result.stdout + result.stderr
    if sandbox == "none":
        leaked = (drop / "leaked.txt").read_text(encoding="utf-8")
        assert "Permission denied" in leaked and "the held-out set" not in leaked
        assert leaked.split()[-1] == "65534"
    else:  # neither the secret nor the drop folder exists in the sandbox
        assert not (drop / "leaked.txt").exists()
    refused = installed.run("grade", "--impl", f"pi-course:{project}", "--run-as", "root")
    assert refused.returncode == 2 and "give an unprivileged user" in refused.stderr


def test_an_installed_copy_ships_its_own_wheel_again_and_refuses_an_edited_install(installed: Installed, tmp_path: Path) -> None:
    built = next((installed.root / "wheels").glob("pi_conformance-*.whl"))
    result = installed.run("autograder", "github-classroom", "--out", str(tmp_path / "template"))
    assert result.returncode == 0, result.stderr
    carried = tmp_path / "template" / ".github" / "pi-conformance" / built.name
    with zipfile.ZipFile(built) as original, zipfile.ZipFile(carried) as again:
        names = [name for name in original.namelist() if not name.endswith("/RECORD")]
        assert sorted(names) == sorted(name for name in again.namelist() if not name.endswith("/RECORD"))
        assert all(original.read(name) == again.read(name) for name in names)
    site = next(installed.venv.glob("lib/python3*/site-packages"))
    edited = site / "conformance" / "autograder" / "finish.py"
    text = edited.read_text(encoding="utf-8")
    try:
        edited.write_text(text + "# a local edit\n", encoding="utf-8")
        refused = installed.run("autograder", "gradescope", "--out", str(tmp_path / "autograder.zip"))
        assert refused.returncode == 2
        assert "conformance/autograder/finish.py is not the one the wheel installed" in refused.stderr
        assert "`make wheel` in a checkout" in refused.stderr
    finally:
        edited.write_text(text, encoding="utf-8")


def test_the_fuzz_extras_install_message_names_a_command_that_works_in_a_venv_from_the_wheel(installed: Installed, tmp_path: Path) -> None:
    missing = installed.run("private-set", "--seed", "s3cret", "--out", str(tmp_path / "set"))
    assert missing.returncode == 2 and "-e" not in missing.stderr.split("needs hypothesis")[1].split("(")[0], missing.stderr
    command = missing.stderr.split("(the fuzz extra): ")[1].split(" (")[0]
    assert command.startswith(f"{installed.venv}/bin/python") and "pip install 'hypothesis>=6.100'" in command
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    works = installed.run("private-set", "--seed", "s3cret", "--out", str(tmp_path / "set"), "--cases", "20")
    assert works.returncode == 0, works.stdout + works.stderr
