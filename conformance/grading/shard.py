"""Split a class into shards, the same way on every machine, so CI can grade it in parallel.

Submissions are sorted by name (Unicode code points after NFC normalization: no locale, no
file-system order) and dealt round robin: shard ``K`` of ``N`` takes positions
``K-1, K-1+N, K-1+2N, ...``. Every machine that sees the same folder picks the same
submissions, and shard sizes differ by at most one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardError(ValueError):
    """A ``--shard`` value that is not ``K/N`` with ``1 <= K <= N``."""


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``."""
    match = _SHARD.match(text)
    if match is None:
        raise ShardError(f"--shard {text!r}: expected K/N, as in --shard 2/4")
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"--shard {text!r}: K must be between 1 and N (and N at least 1)")
    return index, count


def sort_key(path: Path) -> str:
    """The name submissions are ordered by."""
    return unicodedata.normalize("NFC", path.name)


def select_shard(submissions: Sequence[Path], index: int, count: int) -> list[Path]:
    """The submissions of shard ``index`` (1-based) of ``count``."""
    ordered = sorted(submissions, key=sort_key)
    return [path for position, path in enumerate(ordered) if position % count == index - 1]
