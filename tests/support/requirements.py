"""What a test needs from the machine, as pytest markers, and the one place that skips it when missing.

A test (or a module, through ``pytestmark``, or one parameter, through ``pytest.param(...,
marks=...)``) that needs Node.js, npm, bun, the pinned TypeScript toolchain, a working
bubblewrap sandbox or headless Chromium carries the marker below. ``tests/conftest.py`` calls
:func:`skip_missing` on the collected tests, so a test whose tool is missing is skipped with the
reason, reported at the test's own line as a ``skipif`` would be, and ``pytest -m "not
needs_node"`` leaves the tests out altogether. The markers are registered in ``pyproject.toml``.

Each check runs at most once per process, and only when a collected test carries its marker.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

#: Node.js on PATH: the course and pi-ai adapters, ``make_variants.mjs``, the JS example.
needs_node = pytest.mark.needs_node
#: npm on PATH: builds of course projects and installs of published packages (with ``needs_node``).
needs_npm = pytest.mark.needs_npm
#: bun on PATH: the Node adapters run under bun.
needs_bun = pytest.mark.needs_bun
#: The pinned TypeScript toolchain installed (``make toolchain``), which course builds use.
needs_toolchain = pytest.mark.needs_toolchain
#: A bubblewrap sandbox that can run here (installed, and user namespaces allowed).
needs_bwrap = pytest.mark.needs_bwrap
#: Headless Chromium (Debian's ``chromium``) and Playwright for Python to drive it.
needs_chromium = pytest.mark.needs_chromium

#: A throwaway root for setup.sh: root, debootstrap (.ci/run installs it), and opted in with
#: PI_TEST_SETUP_SH_ROOT=1 (it downloads a base system and takes minutes).
needs_throwaway_root = pytest.mark.needs_throwaway_root
SETUP_SH_ROOT_OPT_IN = "PI_TEST_SETUP_SH_ROOT"
#: Builds this checkout's wheel (``pip wheel``: tens of seconds): a cost, not a tool, so no check
#: skips it; ``make test-fast`` leaves it out with the markers above (see :data:`FAST_TIER`).
builds_wheel = pytest.mark.builds_wheel
#: Costs a second or more of a quiet core with no optional tool: drills that wait out timeouts and
#: limits, batch farms, private sets drawn and graded, whole-tree lint, the mutation sample. A cost,
#: not a tool, so no check skips it; ``make test-fast`` leaves it out (see :data:`FAST_TIER`).
#: Mark a new test with it when ``--durations`` shows it at 1 s or more on 2 idle cores.
costly = pytest.mark.costly

#: Where the browser tests find Chromium (the system's; Playwright never downloads one here).
CHROMIUM = Path("/usr/bin/chromium")


def _node() -> str | None:
    return None if shutil.which("node") else "Node.js 20+ is needed and is not on PATH"


def _npm() -> str | None:
    return None if shutil.which("npm") else "npm is needed (builds, package installs) and is not on PATH"


def _bun() -> str | None:
    return None if shutil.which("bun") else "needs bun on PATH (npm install --prefix DIR bun; DIR/node_modules/.bin on PATH)"


def _toolchain() -> str | None:
    from conformance import toolchain

    status = toolchain.status()
    return None if status.installed else status.problem


def _bwrap() -> str | None:
    from conformance.isolation.sandbox import probe

    reason = probe()
    return None if reason is None else f"the sandbox cannot run here: {reason}"


def _chromium() -> str | None:
    if not CHROMIUM.exists():
        return f"headless Chromium (Debian's chromium package, {CHROMIUM}) is not installed; .ci/run installs it"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (pip install -e '.[dev]')"
    return None


def _throwaway_root() -> str | None:
    if os.environ.get(SETUP_SH_ROOT_OPT_IN) != "1":
        return f"setup.sh in a throwaway root takes minutes and downloads a base system: set {SETUP_SH_ROOT_OPT_IN}=1 to run it"
    if os.geteuid() != 0:
        return "debootstrap and chroot need root"
    if shutil.which("debootstrap") is None:
        return "debootstrap is not installed; .ci/run installs it"
    return None


#: Marker name -> why the machine lacks it (None when it has it).
CHECKS: dict[str, Callable[[], str | None]] = {
    "needs_node": _node,
    "needs_npm": _npm,
    "needs_bun": _bun,
    "needs_toolchain": _toolchain,
    "needs_bwrap": _bwrap,
    "needs_chromium": _chromium,
    "needs_throwaway_root": _throwaway_root,
}


@functools.cache
def missing(marker: str) -> str | None:
    """Why this machine cannot run a test marked ``marker``, or None when it can (checked once)."""
    return CHECKS[marker]()


#: The markers of a cost rather than a tool: left out of the fast tier, never skipped.
COSTS = ("builds_wheel", "costly")
#: The ``-m`` expression of the fast tier (``make test-fast``): every test that needs no optional tool and builds no wheel.
FAST_TIER = "not (" + " or ".join([*CHECKS, *COSTS]) + ")"


def skip_missing(items: list[pytest.Item]) -> None:
    """Mark each of ``items`` to be skipped, with the reason, when the machine lacks what one of its markers names."""
    for item in items:
        for name in CHECKS:
            reason = missing(name) if item.get_closest_marker(name) is not None else None
            if reason is not None:
                item.add_marker(pytest.mark.skip(reason=reason))
                break


def require(*markers: str) -> None:
    """Skip the current test, with the reason, unless the machine has what each of ``markers`` names.

    For a fixture that needs a tool whichever test asks for it (a test is marked as well, so
    that ``-m`` selects it; this keeps the fixture right when a new test forgets the marker).
    """
    for name in markers:
        reason = missing(name)
        if reason is not None:
            pytest.skip(reason)
