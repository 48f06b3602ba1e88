"""Split a class into shards, the same way on every machine, so CI can grade it in parallel.

Submissions are sorted by name (Unicode code points after NFC normalization: no locale, no
file-system order) and dealt round robin: shard ``K`` of ``N`` takes positions
``K-1, K-1+N, K-1+2N, ...``. Every machine that sees the same folder picks the same
submissions, and shard sizes differ by at most one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.common.submission_order import sort_key

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardError(ValueError):
    """A ``--shard`` value that is not ``K/N`` with ``1 <= K <= N``, or ``auto`` without job-array variables."""


def parse_shard(text: str, source: str | None = None) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``; ``source`` names where the text came from in errors."""
    source = source or f"--shard {text!r}"
    match = _SHARD.match(text)
    if match is None:
        raise ShardError(f"{source}: expected K/N, as in --shard 2/4 (or --shard auto)")
    index, count = int(match[1]), int(match[2])
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"{source}: K must be between 1 and N (and N at least 1)")
    return index, count


def select_shard(submissions: Sequence[Path], index: int, count: int) -> list[Path]:
    """The submissions of shard ``index`` (1-based) of ``count``."""
    ordered = sorted(submissions, key=sort_key)
    return [path for position, path in enumerate(ordered) if position % count == index - 1]


#: ``--shard auto`` with an explicit ``K/N`` (a CI matrix sets it from its own variables).
EXPLICIT_VARIABLE = "PI_SHARD"
#: The shard count of a Kubernetes Indexed Job: Kubernetes exports only the index
#: (``JOB_COMPLETION_INDEX``), so the manifest passes ``spec.completions`` in this variable.
KUBERNETES_COUNT_VARIABLE = "PI_SHARD_COUNT"


def auto_shard(env: Mapping[str, str]) -> tuple[int, int]:
    """``--shard auto``: ``(K, N)`` from the job-array variables of ``env``.

    Tried in order: ``PI_SHARD=K/N`` (explicit, e.g. from a CI matrix); a Kubernetes
    Indexed Job (``JOB_COMPLETION_INDEX``, 0-based, with ``PI_SHARD_COUNT``); a Slurm job
    array (``SLURM_ARRAY_TASK_ID`` with ``SLURM_ARRAY_TASK_MIN`` and ``SLURM_ARRAY_TASK_COUNT``
    or ``SLURM_ARRAY_TASK_MAX``, and ``SLURM_ARRAY_TASK_STEP`` when the range has a step).
    """
    explicit = env.get(EXPLICIT_VARIABLE)
    if explicit is not None:
        return parse_shard(explicit, f"{EXPLICIT_VARIABLE}={explicit!r}")
    if "JOB_COMPLETION_INDEX" in env:
        index = _integer(env, "JOB_COMPLETION_INDEX")
        if KUBERNETES_COUNT_VARIABLE not in env:
            raise ShardError(
                f"--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but {KUBERNETES_COUNT_VARIABLE} is not; "
                f"set {KUBERNETES_COUNT_VARIABLE} to the Job's spec.completions"
            )
        count = _integer(env, KUBERNETES_COUNT_VARIABLE)
        return _checked(index + 1, count, f"JOB_COMPLETION_INDEX={index} with {KUBERNETES_COUNT_VARIABLE}={count}")
    if "SLURM_ARRAY_TASK_ID" in env:
        task = _integer(env, "SLURM_ARRAY_TASK_ID")
        low = _integer(env, "SLURM_ARRAY_TASK_MIN") if "SLURM_ARRAY_TASK_MIN" in env else None
        step = _integer(env, "SLURM_ARRAY_TASK_STEP") if "SLURM_ARRAY_TASK_STEP" in env else 1
        if low is None or step < 1:
            raise ShardError("--shard auto: SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_MIN (or with a step below 1)")
        if "SLURM_ARRAY_TASK_COUNT" in env:
            count = _integer(env, "SLURM_ARRAY_TASK_COUNT")
        elif "SLURM_ARRAY_TASK_MAX" in env:
            count = (_integer(env, "SLURM_ARRAY_TASK_MAX") - low) // step + 1
        else:
            raise ShardError("--shard auto: SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX")
        if (task - low) % step:
            raise ShardError(f"--shard auto: Slurm task {task} is not on the array's range {low}, {low + step}, ... (use --shard K/N)")
        return _checked((task - low) // step + 1, count, f"Slurm array task {task} (min {low}, step {step}, {count} tasks)")
    raise ShardError(
        "--shard auto: no job-array variables are set: expected PI_SHARD=K/N, JOB_COMPLETION_INDEX with "
        f"{KUBERNETES_COUNT_VARIABLE} (Kubernetes Indexed Job), or SLURM_ARRAY_TASK_ID (Slurm job array)"
    )


def resolve_shard(text: str | None, env: Mapping[str, str]) -> tuple[int, int]:
    """The ``--shard`` value as ``(K, N)``: ``K/N``, ``auto``, or ``(1, 1)`` when not given."""
    if text is None:
        return 1, 1
    return auto_shard(env) if text.strip() == "auto" else parse_shard(text)


def _integer(env: Mapping[str, str], name: str) -> int:
    try:
        return int(env[name].strip())
    except ValueError:
        raise ShardError(f"--shard auto: {name}={env[name]!r} is not a whole number") from None


def _checked(index: int, count: int, source: str) -> tuple[int, int]:
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"--shard auto: {source} is not a shard K of N with 1 <= K <= N")
    return index, count
