"""Gradescope's setup.sh run for real: it installs Node.js, Python and bubblewrap in a throwaway Ubuntu 22.04 root.

Ubuntu 22.04 is Gradescope's default base image. ``debootstrap`` writes a minimal root into a
temporary folder; the autograder zip is unpacked into its ``/autograder/source``, and ``setup.sh``
runs under ``chroot`` as Gradescope runs it: as root, with the real ``/autograder`` and
``/opt/pi-conformance`` (of the throwaway root), from the package mirrors, PyPI and npm.

First with no Node.js in the root: setup.sh installs curl and tries NodeSource's Node.js 22, then
the distro's. Ubuntu 22.04's own nodejs is 12, older than 20, so where NodeSource is out of reach
it must stop and say so. Then, with a Node.js 20 copied in (this machine's), it must install
Python 3.11 (apt, universe), bubblewrap, the wheel and the toolchain, and the installed autograder
grades the course's correct project 100.

Opt-in (PI_TEST_SETUP_SH_ROOT=1, marker needs_throwaway_root): it downloads a base system and takes minutes.
PI_TEST_SETUP_SH_BASE=DIR copies a root debootstrap made before instead of making one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import needs_node, needs_npm, needs_throwaway_root

pytestmark = [needs_throwaway_root, needs_node, needs_npm]
SUITE, MIRROR = "jammy", "http://archive.ubuntu.com/ubuntu"
KEYRING = Path("/usr/share/keyrings/ubuntu-archive-keyring.gpg")
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


#: The variables naming this machine's CA bundle (a TLS-inspecting proxy's CA may be in it): passed into the root.
CA_VARIABLES = ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")


def _this_machines_cas(root: Path) -> list[str]:
    """Copy the CA bundles this machine's variables name into the root (again: apt's ca-certificates rewrites them)."""
    passed = []
    for name in CA_VARIABLES:
        bundle = Path(os.environ.get(name, ""))
        if bundle.is_absolute() and bundle.is_file():
            inside = root / bundle.relative_to("/")
            inside.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(bundle, inside)
            passed.append(f"{name}={bundle}")
    return passed


def _in_root(root: Path, command: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """``command`` under chroot, with the environment a fresh root shell has (and this machine's CA bundle)."""
    environment = [f"PATH={CLEAN_PATH}", "HOME=/root", "LANG=C.UTF-8", *_this_machines_cas(root)]
    argv = ["chroot", str(root), "/usr/bin/env", "-i", *environment, "bash", "-c", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    try:
        urllib.request.urlopen(f"{MIRROR}/dists/{SUITE}/Release", timeout=20).close()
    except OSError as error:
        pytest.skip(f"the Ubuntu mirror {MIRROR} is out of reach here: {error}")
    folder = Path(tempfile.mkdtemp(prefix="pi-setup-root-", dir="/tmp"))
    proc = folder / "proc"
    try:
        # Without Ubuntu's keyring on this machine the bootstrap is unverified; apt inside the root
        # then checks every later download with the root's own ubuntu-keyring.
        check = [f"--keyring={KEYRING}"] if KEYRING.is_file() else ["--no-check-gpg"]
        started = time.perf_counter()
        base = os.environ.get("PI_TEST_SETUP_SH_BASE")  # a root debootstrap made before (copied, never changed)
        bootstrap = ["debootstrap", "--variant=minbase", "--components=main,universe", *check, SUITE, str(folder), MIRROR]
        made = subprocess.run(["cp", "-a", f"{base}/.", str(folder)] if base else bootstrap, capture_output=True, text=True, timeout=1800)
        assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
        print(f"\ndebootstrap {SUITE}: {time.perf_counter() - started:.0f} s")
        shutil.copyfile("/etc/resolv.conf", folder / "etc" / "resolv.conf")
        # The suites an Ubuntu image lists (debootstrap writes the release alone): 22.04's python3.11 is in -updates.
        suites = [f"deb {MIRROR} {SUITE}{pocket} main universe" for pocket in ("", "-updates", "-security")]
        (folder / "etc" / "apt" / "sources.list").write_text("\n".join(suites) + "\n", encoding="utf-8")
        subprocess.run(["mount", "-t", "proc", "proc", str(proc)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(proc)], capture_output=True)
        if subprocess.run(["mountpoint", "-q", str(proc)]).returncode != 0:  # never delete through a mount still there
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(REPO)], check=True)
    out = tmp_path_factory.mktemp("zip") / "autograder.zip"
    made = cli("autograder", "gradescope", "--out", str(out), "--wheel", str(next(wheels.glob("*.whl"))))
    assert made.returncode == 0, made.stderr
    return out


def _unpack(bundle: Path, root: Path) -> None:
    source = root / "autograder" / "source"
    shutil.rmtree(source, ignore_errors=True)
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(source)
    for name in ("setup.sh", "run_autograder"):
        (source / name).chmod(0o755)


def _copy_this_node(root: Path) -> None:
    """This machine's Node.js and npm into the root's /usr/local (it must be 20+ for grading)."""
    node = Path(shutil.which("node") or "")
    npm_package = Path(shutil.which("npm") or "").resolve().parents[1]  # .../node_modules/npm/bin/npm-cli.js
    shutil.copy2(node.resolve(), root / "usr" / "local" / "bin" / "node")
    shutil.copytree(npm_package, root / "usr" / "local" / "lib" / "node_modules" / "npm", symlinks=True, dirs_exist_ok=True)
    npm = root / "usr" / "local" / "bin" / "npm"
    npm.unlink(missing_ok=True)
    npm.symlink_to("../lib/node_modules/npm/bin/npm-cli.js")


def test_setup_sh_installs_node_python_and_bubblewrap_in_a_fresh_ubuntu_root(root: Path, bundle: Path) -> None:
    _unpack(bundle, root)
    started = time.perf_counter()
    first = _in_root(root, "cd /autograder/source && bash ./setup.sh")
    said = first.stdout + first.stderr
    print(f"setup.sh without Node.js: exit {first.returncode} in {time.perf_counter() - started:.0f} s\n{said[-1500:]}")
    assert (root / "usr" / "bin" / "curl").exists()  # the Node.js path's apt install ran
    if first.returncode != 0:  # NodeSource out of reach: the distro's nodejs (12 on 22.04) is refused, with the version found
        assert "NodeSource's repository is out of reach; trying the distro's nodejs" in said
        assert "setup.sh: Node.js 20+ with npm is needed and could not be installed (found: v12." in said
        _copy_this_node(root)
        _unpack(bundle, root)  # setup.sh made the source root-only; unpack afresh as Gradescope would
        started = time.perf_counter()
        second = _in_root(root, "cd /autograder/source && bash ./setup.sh")
        said = second.stdout + second.stderr
        print(
            f"setup.sh with Node.js {_in_root(root, 'node --version').stdout.strip()}: exit {second.returncode} in "
            f"{time.perf_counter() - started:.0f} s\n{said[-2500:]}"
        )
        assert second.returncode == 0, said[-4000:]
    assert "setup.sh: Python Python 3.11" in said and (root / "usr" / "bin" / "python3.11").exists()  # apt's python3.11
    assert (root / "usr" / "bin" / "bwrap").exists()
    assert (root / "opt" / "pi-conformance" / "venv" / "bin" / "pi-conformance").exists()
    assert "toolchain" in said and "setup.sh: done in" in said

    submission = root / "autograder" / "submission"
    shutil.copytree(REPO / "tests" / "support" / "js" / "course-correct", submission, dirs_exist_ok=True)
    graded = _in_root(root, "/autograder/source/run_autograder", timeout=900)
    results = json.loads((root / "autograder" / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 100, graded.stdout[-3000:] + graded.stderr[-2000:]
