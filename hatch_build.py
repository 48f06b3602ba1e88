"""Wheel build hook: ship the proof that the bundled fixtures were checked (conformance/loading/shipped_proof.py).

It runs the checkout's own loader over its fixtures, in the build environment (the hook's
dependencies below are the loader's), and adds the result to the wheel as
``conformance/_data/validated-cases.json``: the first run of a fresh install then skips
re-checking fixtures that cannot have changed since. Editable installs read the checkout and
need none.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PROOF = "conformance/_data/validated-cases.json"


class ShippedProofHook(BuildHookInterface):  # type: ignore[misc]
    """Adds the checked fixtures' proof to a (non-editable) wheel."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        out = Path(tempfile.mkdtemp(prefix="pi-proof-")) / "validated-cases.json"
        env = {**os.environ, "PYTHONPATH": self.root, "PYTHONDONTWRITEBYTECODE": "1"}
        subprocess.run([sys.executable, "-m", "conformance.loading.shipped_proof", str(out)], cwd=self.root, env=env, check=True)
        build_data["force_include"][str(out)] = PROOF
