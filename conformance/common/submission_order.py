"""The one order of a class's submissions: by folder name, Unicode-normalized (shards, gradebooks, sites)."""

from __future__ import annotations

import unicodedata
from pathlib import Path


def sort_key(path: Path) -> str:
    """The name submissions are ordered by."""
    return unicodedata.normalize("NFC", path.name)
