"""The broken JavaScript course projects under ``tests/support/js/variants`` are generated, not tracked.

``tests/support/js/make_variants.mjs`` derives each from ``tests/support/js/course-correct`` with one
textual patch; committing the 13 copies would only duplicate that project.
"""

from __future__ import annotations

import difflib
import itertools
import shutil
import subprocess
from pathlib import Path

from tests.support.paths import REPO

JS = REPO / "tests" / "support" / "js"
VARIANTS = JS / "variants"


def ensure_generated() -> Path:
    """Generate (or refresh) ``tests/support/js/variants``; a no-op without Node.js, whose tests skip anyway."""
    node = shutil.which("node")
    if node is None:
        return VARIANTS
    generator = [node, str(JS / "make_variants.mjs")]
    if subprocess.run([*generator, "--check"], capture_output=True, cwd=REPO, timeout=60).returncode != 0:
        subprocess.run(generator, capture_output=True, cwd=REPO, timeout=60, check=True)
    return VARIANTS


def two_bug_project(first: str, second: str, target: Path) -> Path:
    """A copy of variant ``first`` with variant ``second``'s bug patched in as well: a project with two bugs.

    Each variant replaces a few lines of course-correct; both variants' replacements are laid
    over course-correct's file (an error if they touch one line).
    """
    ensure_generated()
    shutil.copytree(VARIANTS / first, target, symlinks=True)
    dist = Path("packages/pi-course/dist/src")
    for path in sorted((JS / "course-correct" / dist).glob("*.js")):
        base = path.read_text(encoding="utf-8").splitlines(keepends=True)
        changes = []
        for variant in (first, second):
            wanted = (VARIANTS / variant / dist / path.name).read_text(encoding="utf-8").splitlines(keepends=True)
            matcher = difflib.SequenceMatcher(None, base, wanted, autojunk=False)
            opcodes = matcher.get_opcodes()
            changes += [(low, high, wanted[new_low:new_high]) for tag, low, high, new_low, new_high in opcodes if tag != "equal"]
        changes.sort(key=lambda change: change[0])
        for (_, high, _), (low, _, _) in itertools.pairwise(changes):
            if low <= high:  # touching or overlapping: the two bugs are not independent lines
                raise RuntimeError(f"{first} and {second} both change {path.name} near line {low + 1}")
        for low, high, lines in reversed(changes):
            base[low:high] = lines
        if changes:
            written = target / dist / path.name
            written.unlink()  # never write through a symlink into another project
            written.write_text("".join(base), encoding="utf-8")
    return target
