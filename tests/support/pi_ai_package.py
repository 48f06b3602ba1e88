"""The published upstream package (``@earendil-works/pi-ai``), installed from npm once for the tests that run it.

It goes into ``.cache/pi-ai-VERSION`` (or is taken from ``PI_AI_PACKAGE_DIR``); without
Node.js, npm or a reachable registry the test that asked for it is skipped with the reason.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.adapters.pi_ai import PiAiLayoutError, package_folder
from tests.support.paths import REPO
from tests.support.requirements import require

VERSION = "1.6.0"
CACHE = REPO / ".cache" / f"pi-ai-{VERSION}"


def install_pi_ai() -> Path:
    """The installed package's folder, installing it first when needed; skips with the reason."""
    given = os.environ.get("PI_AI_PACKAGE_DIR")
    if given:
        return package_folder(Path(given))
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    # Two pytest-xdist workers can get here at once: one installs, the other waits, then finds it
    # (two npm installs into one folder fail, and a half-written install looks installed).
    with (CACHE.parent / f"pi-ai-{VERSION}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return package_folder(CACHE)
        except PiAiLayoutError:
            pass
        # Installed aside, then renamed into place: an install cut short (Ctrl-C, a full disk)
        # never leaves a folder that looks installed.
        partial = CACHE.with_name(CACHE.name + ".partial")
        for folder in (CACHE, partial):
            shutil.rmtree(folder, ignore_errors=True)
        _npm_install(partial)
        partial.rename(CACHE)
        return package_folder(CACHE)


def _npm_install(prefix: Path) -> None:
    require("needs_node", "needs_npm")
    npm = shutil.which("npm") or "npm"
    command = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", f"@earendil-works/pi-ai@{VERSION}"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm could not install @earendil-works/pi-ai@{VERSION} within 300 s (is the registry reachable?)")
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        pytest.skip(f"npm could not install @earendil-works/pi-ai@{VERSION} (registry unreachable?): {' / '.join(tail)}")
