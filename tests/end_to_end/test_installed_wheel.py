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
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.loading.loader import load_suite
from tests.support.course_projects import monorepo, single_package
from tests.support.paths import REPO
from tests.support.requirements import builds_wheel, needs_bwrap, needs_node, needs_npm

#: Every bundled course case (a new case must not break these tests).
ALL = len(load_suite().cases)

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

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": f"{self.venv / 'bin'}:{os.environ['PATH']}",
            "HOME": os.environ.get("HOME", "/root"),
            "PI_CONFORMANCE_TOOLCHAIN": str(self.toolchain),
            "LANG": "C.UTF-8",
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


@pytest.mark.parametrize("shape", [monorepo, single_package], ids=["monorepo", "single-package"])
def test_the_installed_wheel_grades_a_course_project_without_node_modules_100(installed: Installed, shape: object, tmp_path: Path) -> None:
    project = shape(tmp_path / "student")  # type: ignore[operator]
    result = installed.run("grade", "--impl", f"pi-course:{project}")
    assert f"total    100.00 / 100.00  {ALL}/{ALL} passed" in result.stdout, result.stdout + result.stderr


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
    result = installed.run("grade", "--impl", f"pi-course:{project}", "--run-as", "nobody", "--sandbox", sandbox)
    assert f"total    100.00 / 100.00  {ALL}/{ALL} passed" in result.stdout, result.stdout + result.stderr
    if sandbox == "none":
        leaked = (drop / "leaked.txt").read_text(encoding="utf-8")
        assert "Permission denied" in leaked and "the held-out set" not in leaked
        assert leaked.split()[-1] == "65534"
    else:  # neither the secret nor the drop folder exists in the sandbox
        assert not (drop / "leaked.txt").exists()
    refused = installed.run("grade", "--impl", f"pi-course:{project}", "--run-as", "root")
    assert refused.returncode == 2 and "give an unprivileged user" in refused.stderr
