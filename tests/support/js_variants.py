"""The broken JavaScript course projects under ``tests/support/js/variants`` are generated, not tracked.

``tests/support/js/make_variants.mjs`` derives each from ``tests/support/js/course-correct`` with one
textual patch; committing the 13 copies would only duplicate that project.
"""

from __future__ import annotations

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
