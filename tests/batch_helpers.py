"""Small, fast classes of submissions for the batch tests: each is a folder whose ``behaviour``
file tells one shell script what to do before it serves the reference over the wire.

Graded with a rubric of lab 3.1 only, a submission takes well under a second, so the tests
can afford to kill, interrupt and resume whole batches.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

RUBRIC = 'version: 1\nname: lab 3.1 only\nlabs:\n  "3.1": {weight: 10}\n'

# $1 is the submission's folder; exactly one argument, however odd its name.
SCRIPT = """#!/bin/sh
[ $# -eq 1 ] || { echo "expected one argument, got $#" >&2; exit 3; }
behaviour=$(cat "$1/behaviour" 2>/dev/null || echo ok)
case "$behaviour" in
  kill-parent)
    # Walk up to the grading worker (past the process supervisor between them) and kill it.
    pid=$PPID
    while [ "$pid" -gt 1 ]; do
      if tr '\\0' ' ' < /proc/$pid/cmdline | grep -q conformance.grading.worker; then kill -9 "$pid"; break; fi
      pid=$(awk '{print $4}' /proc/$pid/stat)
    done
    sleep 30;;
  slow) sleep 1;;
esac
exec "$PYEXE" -m conformance.server --impl reference
"""


def make_class(root: Path, behaviours: dict[str, str]) -> tuple[Path, list[str]]:
    """Submission folders under ``root/submissions``; the grade-batch arguments that grade them."""
    submissions = root / "submissions"
    for name, behaviour in behaviours.items():
        (submissions / name).mkdir(parents=True)
        (submissions / name / "behaviour").write_text(behaviour + "\n", encoding="utf-8")
    script = root / "serve.sh"
    script.write_text(SCRIPT, encoding="utf-8")
    rubric = root / "rubric.yaml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    arguments = [
        "grade-batch",
        str(submissions),
        "--rubric",
        str(rubric),
        "--impl-template",
        f"cmd:sh {script} {{path}}",
        "--env",
        f"PYEXE={sys.executable}",
        "--env",
        f"PYTHONPATH={REPO}",
    ]
    return submissions, arguments


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI subprocess: the repository importable, no job-array variables."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PI_SHARD", "JOB_COMPLETION", "SLURM_"))}
    return {**env, "PYTHONPATH": str(REPO), **(extra or {})}


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``pi-conformance`` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args], capture_output=True, text=True, cwd=REPO, env=cli_env(env), timeout=timeout
    )


def rows(gradebook: Path) -> dict[str, dict[str, str]]:
    """A gradebook's rows by submission."""
    with gradebook.open(encoding="utf-8", newline="") as file:
        return {row["submission"]: row for row in csv.DictReader(file)}
