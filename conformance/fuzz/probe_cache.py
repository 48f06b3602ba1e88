"""The private set's probe draws (:func:`conformance.fuzz.private.predictable_inputs`), kept in the user's cache.

The probes are about 1,000 Hypothesis draws from four public seeds, the same for every secret:
several seconds of each ``private-set`` run that gave the same answer last time. The answer is
kept in :func:`~conformance.common.user_cache.cache_folder` ``("probes")``, keyed by the bytes of
the code that draws them (``conformance/fuzz``, the canonical inputs key in ``yamlio``,
``common``, the operations' ``model``) and by Hypothesis's version: any edit to them, or another
Hypothesis, misses and draws again, so what is read is what drawing would give. A file that
cannot be read or does not hold a list of strings is drawn again; a cache that cannot be
written is skipped. The probes' seeds are public: nothing in the file is secret.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from conformance.common.atomic_file import write_text_atomic

#: The packages whose code decides the probes' draws.
_DRAWING_CODE = ("fuzz", "yamlio", "common", "model")
_PACKAGE = Path(__file__).resolve().parents[1]


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
        return found
    found = draw()
    try:
        write_text_atomic(path, json.dumps(sorted(found)))
    except OSError:
        pass  # a read-only or full cache: the next run draws again
    return found


def _read(path: Path) -> frozenset[str] | None:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, list) or not all(isinstance(item, str) for item in stored):
        return None
    return frozenset(stored)
