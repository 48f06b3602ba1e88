"""The published upstream agent runtime (``@earendil-works/pi-agent-core``), installed from npm once, and one-bug copies of it.

It goes into ``.cache/pi-agent-core-VERSION`` (or is taken from ``PI_AGENT_CORE_PACKAGE_DIR``);
without Node.js, npm or a reachable registry the test that asked for it is skipped with the
reason. A broken variant is a hard-linked copy of that install (cheap: 110 MB of dependencies
are shared) whose ``dist/agent-loop.js`` gets one textual patch and whose version says so, so
that it is never taken for the reference.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.adapters.pi_agent_core import PACKAGE_NAME
from conformance.adapters.pi_ai import PiAiLayoutError, package_folder
from tests.support.paths import REPO
from tests.support.requirements import require

VERSION = "1.6.0"
CACHE = REPO / ".cache" / f"pi-agent-core-{VERSION}"


def install_pi_agent_core() -> Path:
    """The installed prefix (holding node_modules/), installing it first when needed; skips with the reason."""
    given = os.environ.get("PI_AGENT_CORE_PACKAGE_DIR")
    if given:
        return Path(given)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with (CACHE.parent / f"pi-agent-core-{VERSION}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two pytest-xdist workers: one installs, the other waits
        try:
            package_folder(CACHE, PACKAGE_NAME)
            return CACHE
        except PiAiLayoutError:
            pass
        partial = CACHE.with_name(CACHE.name + ".partial")
        for folder in (CACHE, partial):
            shutil.rmtree(folder, ignore_errors=True)
        _npm_install(partial)
        partial.rename(CACHE)
        return CACHE


def _npm_install(prefix: Path) -> None:
    require("needs_node", "needs_npm")
    npm = shutil.which("npm") or "npm"
    spec = f"{PACKAGE_NAME}@{VERSION}"
    command = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", spec]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm could not install {spec} within 300 s (is the registry reachable?)")
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        pytest.skip(f"npm could not install {spec} (registry unreachable?): {' / '.join(tail)}")


def broken_variant(prefix: Path, where: Path, old: str, new: str, label: str, file: str = "agent-loop.js") -> Path:
    """A copy of the install at ``prefix`` under ``where`` whose ``dist/FILE`` has ``old`` replaced by ``new`` (exactly once)."""
    copy = where / label
    shutil.copytree(prefix, copy, symlinks=True, copy_function=os.link)
    package = package_folder(copy, PACKAGE_NAME)
    loop = package / "dist" / file
    text = loop.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the patch {label!r} no longer applies to {loop}"
    _rewrite(loop, text.replace(old, new))
    manifest = package / "package.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["version"] = f"{VERSION}-{label}"
    _rewrite(manifest, json.dumps(data))
    return copy


def _rewrite(path: Path, text: str) -> None:
    path.unlink()  # a hard link: writing in place would patch the cached install too
    path.write_text(text, encoding="utf-8")
