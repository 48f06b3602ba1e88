"""Running ``pi-conformance`` in a subprocess, as a user would: one helper for every test that does."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.js_variants import REPO


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI subprocess: the repository importable, no job-array variables."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PI_SHARD", "JOB_COMPLETION", "SLURM_"))}
    return {**env, "PYTHONPATH": str(REPO), **(extra or {})}


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``pi-conformance ARGS`` from the repository root; ``env`` adds to (or replaces) :func:`cli_env`'s variables."""
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, cwd=REPO, env=cli_env(env), timeout=timeout
    )
