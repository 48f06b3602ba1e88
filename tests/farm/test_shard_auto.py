"""``--shard auto``: the shard K/N from the variables a job array sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.farm.shard import ShardError, auto_shard, resolve_shard, select_shard
from tests.support.batch_helpers import cli


@pytest.mark.parametrize(
    ("env", "shard"),
    [
        ({"PI_SHARD": "2/3"}, (2, 3)),
        ({"JOB_COMPLETION_INDEX": "0", "PI_SHARD_COUNT": "4"}, (1, 4)),
        ({"JOB_COMPLETION_INDEX": "3", "PI_SHARD_COUNT": "4"}, (4, 4)),
        ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "8"}, (1, 8)),
        ({"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "8"}, (8, 8)),
        ({"SLURM_ARRAY_TASK_ID": "14", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_MAX": "16", "SLURM_ARRAY_TASK_STEP": "2"}, (3, 4)),
        # An explicit K/N wins over the scheduler's variables.
        ({"PI_SHARD": "1/2", "JOB_COMPLETION_INDEX": "1", "PI_SHARD_COUNT": "2"}, (1, 2)),
    ],
)
def test_auto_reads_the_job_array_variables(env: dict[str, str], shard: tuple[int, int]) -> None:
    assert auto_shard(env) == shard
    assert resolve_shard("auto", env) == shard


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "no job-array variables are set"),
        ({"JOB_COMPLETION_INDEX": "0"}, "set PI_SHARD_COUNT to the Job's spec.completions"),
        ({"JOB_COMPLETION_INDEX": "4", "PI_SHARD_COUNT": "4"}, "is not a shard K of N"),
        ({"JOB_COMPLETION_INDEX": "x", "PI_SHARD_COUNT": "4"}, "is not a whole number"),
        ({"SLURM_ARRAY_TASK_ID": "3"}, "without SLURM_ARRAY_TASK_MIN"),
        ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1"}, "without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX"),
        (
            {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "8", "SLURM_ARRAY_TASK_STEP": "2"},
            "not on the",
        ),
        ({"PI_SHARD": "3/2"}, "PI_SHARD='3/2'"),
    ],
)
def test_auto_without_usable_variables_says_what_it_looked_for(env: dict[str, str], message: str) -> None:
    with pytest.raises(ShardError, match=message.replace("(", r"\(").replace(")", r"\)")):
        auto_shard(env)


def test_no_shard_is_the_whole_class_and_k_of_n_still_works() -> None:
    assert resolve_shard(None, {"PI_SHARD": "2/2"}) == (1, 1)
    assert resolve_shard("2/4", {}) == (2, 4)
    names = [Path(name) for name in ("e", "a", "d", "b", "c")]
    assert [path.name for path in select_shard(names, 1, 2)] == ["a", "c", "e"]


def test_grade_batch_auto_without_variables_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("grade-batch", str(tmp_path), "--shard", "auto", "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "--shard auto: no job-array variables are set" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()
