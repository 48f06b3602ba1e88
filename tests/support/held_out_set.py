"""A private held-out set for tests: public cases of the course, copied under new ids."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.paths import REPO

#: The public file the held-out cases are copied from, and the prefix of their new ids.
SOURCE = REPO / "fixtures" / "ch03" / "text-of.yaml"
PREFIX = "private-"


def write_held_out(folder: Path, count: int = 3, rename: bool = True, source: Path = SOURCE) -> list[str]:
    """Write the first ``count`` cases of ``source`` into ``folder/<its name>-private.yaml``; their ids."""
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    cases = data["cases"][:count]
    for case in cases:
        case["id"] = PREFIX + case["id"] if rename else case["id"]
    folder.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump({**data, "cases": cases}, allow_unicode=True, sort_keys=False)
    (folder / f"{source.stem}-private.yaml").write_text(text, encoding="utf-8")
    return [case["id"] for case in cases]
