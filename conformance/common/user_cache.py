"""The user's cache folders: ``$XDG_CACHE_HOME/pi-conformance/NAME`` (``~/.cache`` by default).

``PI_CONFORMANCE_CACHE`` moves every one of them into the one folder it names, or, set to
``off`` (``0``, ``no``), turns them all off: what is cached is then computed again each run.
"""

from __future__ import annotations

import os
from pathlib import Path

_OFF = frozenset({"off", "0", "no"})


def cache_folder(name: str) -> Path | None:
    """The folder of the cache ``name`` (``validated``, ``probes``), or None when caching is off."""
    setting = os.environ.get("PI_CONFORMANCE_CACHE", "")
    if setting.lower() in _OFF:
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pi-conformance" / name
