"""One budget per submission (``conformance/isolation/budget.py``): the group every program's group is made in.

The drills that show what it holds are in ``test_budget_drills.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conformance.isolation import budget, limits
from conformance.isolation.limits import MIB, Limits

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="budgets are Linux cgroups")


def _support() -> limits.CgroupSupport:
    support = limits.detect()
    if not support.has("memory"):
        pytest.skip(f"no memory cgroup can be written here: {support.reason}")
    return support


def test_a_program_group_is_made_below_the_open_budget_and_everything_goes_with_it() -> None:
    support = _support()
    with budget.submission_budget(Limits(memory_mb=300, pids=50), support) as opened:
        assert opened is not None and budget.program_support() is opened
        for (kind, parent), (opened_kind, folder) in zip(support.parents, opened.parents, strict=True):
            assert kind == opened_kind and os.path.dirname(folder) == parent
            assert os.path.basename(folder).startswith(budget.BUDGET_PREFIX)
        memory = next(folder for kind, folder in opened.parents if kind in ("memory", "unified"))
        limit_file = "memory.max" if opened.mechanism == "cgroup v2" else "memory.limit_in_bytes"
        assert Path(memory, limit_file).read_text(encoding="ascii").strip() == str(300 * MIB)
        flags = limits.supervisor_flags(Limits(), budget.program_support())
        assert f"{opened.parents[0][0]}:{opened.parents[0][1]}" in flags
        # A program's group left below it (a supervisor killed outright) goes with the budget.
        os.mkdir(os.path.join(memory, f"{limits.GROUP_PREFIX}1"))
    assert budget.program_support() == support
    assert not any(os.path.exists(folder) for _, folder in opened.parents)


def test_a_budget_whose_grader_is_dead_is_removed_with_its_groups() -> None:
    support = _support()
    folders = budget.make_budget(Limits(memory_mb=300, pids=50), support)
    try:
        dead = os.path.join(os.path.dirname(folders[0][1]), f"{budget.BUDGET_PREFIX}999999999-1")
        os.rename(folders[0][1], dead)
        folders = ((folders[0][0], dead), *folders[1:])
        os.mkdir(os.path.join(dead, f"{limits.GROUP_PREFIX}12"))
        budget.remove_orphan_groups(support)
        assert not os.path.exists(dead)
    finally:
        for _, folder in folders:
            limits.empty_and_remove(folder)


def test_no_budget_is_made_when_nothing_is_limited() -> None:
    with budget.submission_budget(Limits.off()) as opened:
        assert opened is None and budget.program_support() == limits.detect()


def test_a_cgroup_v2_budget_carries_the_limits_and_gives_its_programs_the_controllers(tmp_path: Path) -> None:
    # This machine's cgroup v2 has no controllers (v1 holds them): the files a v2 budget writes, in a made-up hierarchy.
    support = limits.CgroupSupport("cgroup v2", (("unified", str(tmp_path)),))
    ((kind, folder),) = budget.make_budget(Limits(memory_mb=300, pids=50), support)
    assert kind == "unified" and os.path.dirname(folder) == str(tmp_path)
    written = {name: Path(folder, name).read_text(encoding="ascii") for name in ("memory.max", "memory.swap.max", "pids.max")}
    assert written == {"memory.max": str(300 * MIB), "memory.swap.max": "0", "pids.max": "50"}
    assert Path(folder, "cgroup.subtree_control").read_text(encoding="ascii") == "+memory +pids"


def test_a_budget_the_kernel_refuses_is_an_error_not_a_silent_pass(tmp_path: Path) -> None:
    support = limits.CgroupSupport("cgroup v1", (("memory", str(tmp_path / "no" / "such")),))
    with pytest.raises(budget.BudgetUnavailable, match="cannot make the submission's budget cgroup"):
        budget.make_budget(Limits(), support)
