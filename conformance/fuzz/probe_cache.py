"""The private set's probe draws (:func:`conformance.fuzz.private.predictable_inputs`), kept in the user's cache.

The probes are about 1,000 Hypothesis draws from four public seeds, the same for every secret:
several seconds of each ``private-set`` run that gave the same answer last time. The answer is
kept in :func:`~conformance.common.user_cache.cache_folder` ``("probes")``, keyed by the bytes of
the code that draws them (``conformance/fuzz``, the canonical inputs key in ``yamlio``,
``common``, the operations' ``model``) and by Hypothesis's version: any edit to them, or another
Hypothesis, misses and draws again, so what is read is what drawing would give. A file that
cannot be read or does not hold a list of strings is drawn again; a cache that cannot be
written is skipped. Each install's code writes a file of its own (about 1 MB): a hit marks its
file used, and writing a new one removes the others unused for :data:`UNUSED_DAYS` days, so
upgrades and edits do not pile them up. The probes' seeds are public: nothing in the file is secret.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from conformance.common.atomic_file import write_text_atomic

#: The packages whose code decides the probes' draws.
_DRAWING_CODE = ("fuzz", "yamlio", "common", "model")
_PACKAGE = Path(__file__).resolve().parents[1]
#: Another install's file is removed once unused this long (a hit marks a file used).
UNUSED_DAYS = 14


@functools.cache
def probe_key() -> str:
    """The cache key of this install's probe draws."""
    import hypothesis

    digest = hashlib.sha256(f"probes-2\0{hypothesis.__version__}\0".encode())
    for folder in _DRAWING_CODE:
        for path in sorted((_PACKAGE / folder).rglob("*.py")):
            digest.update(str(path.relative_to(_PACKAGE.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def cached_draws(draw: Callable[[], frozenset[str]], folder: Path | None) -> frozenset[str]:
    """``draw()``'s answer, read from ``folder`` when it holds this key's (None: no cache), else drawn and stored there."""
    if folder is None:
        return draw()
    path = folder / f"probe-draws-{probe_key()}.json"
    found = _read(path)
    if found is not None:
        with contextlib.suppress(OSError):
            os.utime(path)  # used: kept when another install writes its own
        return found
    found = draw()
    try:
        write_text_atomic(path, json.dumps(sorted(found)))
    except OSError:
        return found  # a read-only or full cache: the next run draws again
    _remove_unused(folder, path)
    return found


def _remove_unused(folder: Path, kept: Path) -> None:
    """Other installs' probe files unused for :data:`UNUSED_DAYS` days (a file another process removes first is fine)."""
    oldest = time.time() - UNUSED_DAYS * 86400
    for other in folder.glob("probe-draws-*.json"):
        with contextlib.suppress(OSError):
            if other != kept and other.stat().st_mtime < oldest:
                other.unlink()


def _read(path: Path) -> frozenset[str] | None:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, list) or not all(isinstance(item, str) for item in stored):
        return None
    return frozenset(stored)
