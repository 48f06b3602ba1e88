"""Remember fixture files that already passed schema validation, keyed by content.

Schema validation is most of the cost of loading the fixtures, and staff run the same
fixtures once per submission. The key is a hash of the file's bytes and of every schema's
bytes, so any edit to either makes the entry miss; only successes are stored. Set
``PI_CONFORMANCE_CACHE=off`` to disable it, or to a folder to move it.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

from conformance.paths import schemas_dir

# Bumped when the loader's own shape checks (beyond the schemas) change: old entries then miss.
_CHECKS = b"expectation-keys-1\0"


def _cache_dir() -> Path | None:
    setting = os.environ.get("PI_CONFORMANCE_CACHE", "")
    if setting.lower() in {"off", "0", "no"}:
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pi-conformance" / "validated"


@cache
def _schemas_digest(folder: Path) -> bytes:
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.schema.json")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


def key(text: str) -> str:
    """The cache key of a fixture file's text under the current schemas."""
    return hashlib.sha256(_CHECKS + _schemas_digest(schemas_dir()) + text.encode("utf-8")).hexdigest()


def known_valid(text: str) -> bool:
    """True when this exact text already validated against these exact schemas."""
    folder = _cache_dir()
    return folder is not None and (folder / key(text)).is_file()


def remember_valid(text: str) -> None:
    """Record a successful validation; a cache that cannot be written is simply skipped."""
    folder = _cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / key(text)).touch()
    except OSError:
        pass
