"""The pinned compiler set that builds students' TypeScript projects, installed into a per-user cache.

The set is what the course's ``tsconfig.json`` needs: the course's own TypeScript (7.x, the
native compiler) and ``@types/node`` (its ``"types": ["node"]``). Its exact versions are the
lock file shipped inside this package (``lock/package-lock.json``), so a checkout and a wheel
install the same bytes. ``pi-conformance toolchain install`` runs ``npm ci`` from that lock
into the cache; nothing is fetched while grading, and a missing toolchain is one line that
names the command to run.

Where it lives: ``$PI_CONFORMANCE_TOOLCHAIN`` when set (a folder that holds ``node_modules/``),
else ``$XDG_CACHE_HOME/pi-conformance/toolchain/<lock id>`` (``~/.cache`` by default). The lock
id is a digest of the lock files: a new lock installs beside the old one, never over it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

LOCK_FOLDER = Path(__file__).resolve().parent / "lock"
_LOCK_FILES = ("package.json", "package-lock.json")
ENV_VAR = "PI_CONFORMANCE_TOOLCHAIN"
INSTALL_COMMAND = "pi-conformance toolchain install"
#: Written after a complete install: which lock the folder holds (a half-done install has none).
STAMP = ".pi-conformance-lock"
#: The packages whose versions ``status`` reports.
PACKAGES = ("typescript", "@types/node")
_INSTALL_TIMEOUT_S = 600


class ToolchainMissing(RuntimeError):
    """The pinned toolchain is not installed (or not the locked one): the message names the fix."""


def lock_id() -> str:
    """A short digest of the shipped lock files."""
    digest = hashlib.sha256()
    for name in _LOCK_FILES:
        digest.update((LOCK_FOLDER / name).read_bytes())
    return digest.hexdigest()[:12]


def locked_versions() -> dict[str, str]:
    """The version of each package in :data:`PACKAGES` that the lock pins."""
    lock = json.loads((LOCK_FOLDER / "package-lock.json").read_text(encoding="utf-8"))
    packages = lock.get("packages", {})
    return {name: str(packages.get(f"node_modules/{name}", {}).get("version", "?")) for name in PACKAGES}


def cache_home() -> Path:
    """``$XDG_CACHE_HOME`` (an absolute path), else ``~/.cache``."""
    configured = os.environ.get("XDG_CACHE_HOME", "")
    return Path(configured) if os.path.isabs(configured) else Path.home() / ".cache"


def folder() -> Path:
    """Where the toolchain is (or would be) installed: it holds ``node_modules/``."""
    configured = os.environ.get(ENV_VAR, "")
    if configured:
        return Path(configured).expanduser().resolve()
    return cache_home() / "pi-conformance" / "toolchain" / lock_id()


@dataclass(frozen=True)
class ToolchainStatus:
    """What is installed where, against the lock."""

    folder: Path
    installed: bool
    #: Installed versions (empty when not installed).
    versions: dict[str, str] = field(default_factory=dict)
    #: Why it cannot be used, in one line that names the fix; None when it can.
    problem: str | None = None

    @property
    def node_modules(self) -> Path:
        return self.folder / "node_modules"

    @property
    def bin(self) -> Path:
        """The folder of the ``tsc`` command."""
        return self.node_modules / ".bin"


def status(where: Path | None = None) -> ToolchainStatus:
    """Whether the locked toolchain is installed at ``where`` (default :func:`folder`)."""
    where = where or folder()
    try:
        stamp = (where / STAMP).read_text(encoding="utf-8").strip()
    except OSError:
        stamp = ""
    if stamp != lock_id() or not (where / "node_modules" / ".bin" / "tsc").exists():
        what = "an older lock" if stamp else "nothing"
        problem = f"the pinned TypeScript toolchain is not installed in {where} (it holds {what}): run `{INSTALL_COMMAND}`"
        return ToolchainStatus(where, installed=False, problem=problem)
    versions = {}
    for name in PACKAGES:
        try:
            manifest = json.loads((where / "node_modules" / name / "package.json").read_text(encoding="utf-8"))
            versions[name] = str(manifest.get("version", "?"))
        except (OSError, ValueError):
            versions[name] = "missing"
    missing = [name for name, version in versions.items() if version == "missing"]
    lacking = f"the toolchain in {where} lacks {', '.join(missing)}: run `{INSTALL_COMMAND}`" if missing else None
    return ToolchainStatus(where, installed=not missing, versions=versions, problem=lacking)


def require() -> ToolchainStatus:
    """The installed toolchain; :class:`ToolchainMissing` (one line, naming the command) when it is not."""
    found = status()
    if found.problem is not None:
        raise ToolchainMissing(found.problem)
    return found


def install(where: Path | None = None, npm: str = "") -> ToolchainStatus:
    """Install the locked toolchain with ``npm ci`` (registry access needed); a no-op when it is there.

    npm runs in a fresh sibling folder that replaces the old one only once it is complete,
    so an interrupted install never leaves a half toolchain that looks installed. Package
    scripts are not run (``--ignore-scripts``): the compiler needs none.
    """
    where = where or folder()
    current = status(where)
    if current.installed:
        return current
    npm = npm or shutil.which("npm") or ""
    if not npm:
        from conformance.toolchain.node_versions import INSTALL_MAJOR

        raise ToolchainMissing(f"npm is not on PATH: install Node.js {INSTALL_MAJOR} (it brings npm), then run `{INSTALL_COMMAND}`")
    where.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{where.name}-", dir=where.parent))
    try:
        for name in _LOCK_FILES:
            shutil.copyfile(LOCK_FOLDER / name, staging / name)
        command = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
        result = subprocess.run(command, cwd=staging, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            output = (result.stderr or result.stdout).strip().splitlines()
            raise ToolchainMissing(f"npm ci failed (status {result.returncode}): {output[-1] if output else 'no output'}")
        (staging / STAMP).write_text(lock_id() + "\n", encoding="utf-8")
        # World-readable: a grader running student builds as another user (--run-as) shares it.
        staging.chmod(0o755)
        if where.exists():
            shutil.rmtree(where)
        staging.rename(where)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return status(where)
