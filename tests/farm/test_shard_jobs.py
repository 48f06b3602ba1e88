"""Two shard processes side by side, as a job array starts them, then one merged gradebook.

Each process gets only what its scheduler would set: a Kubernetes Indexed Job's
``JOB_COMPLETION_INDEX`` (with the ``PI_SHARD_COUNT`` its manifest passes) or a CI
matrix's ``PI_SHARD=K/N``; both run ``--shard auto`` (Slurm's variables are read by the
same code, checked in ``test_shard_auto.py``).
The merge must hold every submission exactly once, and refuse a missing or repeated shard.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.batch_helpers import cli, cli_env, make_class, rows
from tests.support.paths import REPO
from tests.support.requirements import costly

SCHEDULERS = {
    "kubernetes-indexed-job": lambda index: {"JOB_COMPLETION_INDEX": str(index), "PI_SHARD_COUNT": "2"},
    "ci-matrix": lambda index: {"PI_SHARD": f"{index + 1}/2"},
}
NAMES = ["ann", "ben", "cat"]


@costly
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_two_shards_side_by_side_merge_into_every_submission_once(tmp_path: Path, scheduler: str) -> None:
    _, arguments = make_class(tmp_path, {name: "ok" for name in NAMES})
    shards = []
    for index in (0, 1):
        out = tmp_path / f"shard-{index}"
        command = [sys.executable, "-m", "conformance.cli", *arguments, "--shard", "auto", "--out", str(out)]
        env = cli_env(SCHEDULERS[scheduler](index))
        shards.append((out, subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    for _, process in shards:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr
    gradebooks = [str(out / "gradebook.csv") for out, _ in shards]
    sizes = sorted(len(rows(Path(path))) for path in gradebooks)
    assert sizes == [1, 2]

    merged = tmp_path / "gradebook.csv"
    result = cli("gradebook-merge", *gradebooks, "-o", str(merged))
    assert result.returncode == 0, result.stderr
    final = rows(merged)
    assert sorted(final) == NAMES and all(row["status"] == "ok" for row in final.values())

    missing = cli("gradebook-merge", gradebooks[0], "-o", str(tmp_path / "partial.csv"))
    assert missing.returncode == 2 and "missing shard(s) 2/2" in missing.stderr
    repeated = cli("gradebook-merge", gradebooks[0], gradebooks[0], gradebooks[1], "-o", str(tmp_path / "twice.csv"))
    assert repeated.returncode == 2 and "is given twice" in repeated.stderr
    assert not (tmp_path / "partial.csv").exists() and not (tmp_path / "twice.csv").exists()
