"""The private set's probe draws (:func:`conformance.fuzz.private.predictable_inputs`), computed once per checkout.

The probes are about 1,000 Hypothesis draws from four public seeds: about 12 s of CPU, and the
same answer for the same code. ``functools.cache`` keeps it for one process only, and the tests
draw private sets in many (each ``private-set`` command, each pytest-xdist worker): the probes
were the largest single cost of the fast tier. Here the answer is kept on disk beside the tests'
validation cache, keyed by the bytes of the code that draws them (``conformance/fuzz``, the
canonical inputs key, the operations' model) and by Hypothesis's version, so any edit to them
misses and draws again: what a test gets is what the function returns.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tests.support.paths import REPO

#: The code whose bytes decide the probes' draws.
_DRAWING_CODE = ("conformance/fuzz", "conformance/yamlio", "conformance/common", "conformance/model")


def _key() -> str:
    import hypothesis

    digest = hashlib.sha256(f"probes-1\0{hypothesis.__version__}\0".encode())
    for folder in _DRAWING_CODE:
        for path in sorted((REPO / folder).rglob("*.py")):
            digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def share_probe_draws(cache: Path) -> None:
    """Make this process's ``predictable_inputs`` read the probes from ``cache`` (drawing and storing them on a miss)."""
    from conformance.fuzz import private

    if getattr(private.predictable_inputs, "shared_from", None) == cache:
        return
    path = cache / f"probe-draws-{_key()}.json"
    try:
        found = frozenset(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        found = private.predictable_inputs()
        cache.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(sorted(found)), encoding="utf-8")
        temporary.replace(path)

    def predictable_inputs() -> frozenset[str]:
        return found

    predictable_inputs.shared_from = cache  # type: ignore[attr-defined]
    private.predictable_inputs = predictable_inputs  # type: ignore[assignment]
