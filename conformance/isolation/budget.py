"""One budget per submission: a memory and pids cgroup that is the parent of every program it starts.

Without it each program start (the build, the adapter, every retry's fresh adapter, the
held-out phase's adapter) got a group of its own with the whole limit, so a submission that
made the grader retry (three timeouts: four fresh adapters at once) held four times the
memory it was given. Inside :func:`submission_budget`, every program's group is made below
the submission's budget group (``PARENT/pi-conformance-budget-<grader pid>-<n>``), which
carries the submission's limits: the kernel counts the programs together (cgroup v1's memory
and pids hierarchies count a group's children in it; so does v2), tmpfs pages included,
since they are charged to the writer's group and stay charged to the budget after that
program's own group is gone (a build's disk, :mod:`.build_disk`, is such a tmpfs).

One submission is graded per process (a grading worker, ``grade``, ``check``), so the
budget open in this process is kept in a module variable that :func:`program_support`
reads when a program's supervisor command line is made.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conformance.isolation import limits as cgroup_limits
from conformance.isolation.limits import GROUP_PREFIX, MIB, V2_LEAF, CgroupSupport, GroupKind, Limits, empty_and_remove

#: The name of a submission's budget group: this prefix, the grader's pid and a counter.
BUDGET_PREFIX = f"{GROUP_PREFIX}budget-"
_active: CgroupSupport | None = None
_counter = itertools.count(1)


class BudgetUnavailable(RuntimeError):
    """The submission's budget group could not be made, though cgroups work here (one line)."""


def program_support() -> CgroupSupport:
    """Where programs' groups are made now: under the open submission budget, else under the grader's own groups."""
    return _active if _active is not None else cgroup_limits.detect()


def active_budget() -> CgroupSupport | None:
    """The submission budget open in this process, if any."""
    return _active


@contextmanager
def submission_budget(limits: Limits, support: CgroupSupport | None = None) -> Iterator[CgroupSupport | None]:
    """Open one budget (memory and pids) for everything the submission graded inside runs.

    Yields the budget's support (its folders as the parents of the programs' groups), or None
    when nothing is limited or no cgroup works here (the per-process rlimits then hold, as
    the limits' description says). A budget already open is kept, not nested. On leaving,
    whatever is still in the budget is killed and its groups removed.
    :class:`BudgetUnavailable` when a cgroup that works here refuses the budget.
    """
    global _active
    support = support if support is not None else cgroup_limits.detect()
    wanted = (limits.memory_mb is not None and support.has("memory")) or (limits.pids is not None and support.has("pids"))
    if _active is not None or not wanted:
        yield _active
        return
    folders = make_budget(limits, support)
    _active = CgroupSupport(support.mechanism, folders, support.reason)
    try:
        yield _active
    finally:
        _active = None
        for _, folder in folders:
            empty_and_remove(folder)


def make_budget(limits: Limits, support: CgroupSupport) -> tuple[tuple[GroupKind, str], ...]:
    """The budget's group in each of ``support``'s hierarchies, with ``limits``' memory and pids."""
    name = f"{BUDGET_PREFIX}{os.getpid()}-{next(_counter)}"
    made: list[tuple[GroupKind, str]] = []
    try:
        for kind, parent in support.parents:
            folder = os.path.join(parent, name)
            os.mkdir(folder)
            made.append((kind, folder))
            _set_limits(kind, folder, limits)
    except OSError as error:
        for _, folder in made:
            empty_and_remove(folder)
        raise BudgetUnavailable(f"cannot make the submission's budget cgroup: {error}") from error
    return tuple(made)


def _set_limits(kind: GroupKind, folder: str, limits: Limits) -> None:
    memory = str(limits.memory_mb * MIB) if limits.memory_mb is not None else None
    if kind == "unified":
        if memory is not None:
            _write(f"{folder}/memory.max", memory)
            _optional(f"{folder}/memory.swap.max", "0")
        if limits.pids is not None:
            _write(f"{folder}/pids.max", str(limits.pids))
        # The programs' groups below get the same controllers (this group holds no process itself).
        _write(f"{folder}/cgroup.subtree_control", "+memory +pids")
    elif kind == "memory" and memory is not None:
        # Before any child exists: older v1 kernels count children in a parent only with it set.
        _optional(f"{folder}/memory.use_hierarchy", "1")
        _write(f"{folder}/memory.limit_in_bytes", memory)
        _optional(f"{folder}/memory.memsw.limit_in_bytes", memory)  # no escape into swap
    elif kind == "pids" and limits.pids is not None:
        _write(f"{folder}/pids.max", str(limits.pids))


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as file:
        file.write(text)


def _optional(path: str, text: str) -> None:
    try:
        _write(path, text)
    except OSError:
        pass  # absent on this kernel (no swap accounting, hierarchy always on)


def budget_owner(name: str) -> int | None:
    """The pid of the grader whose budget group is called ``name``, or None when it is no budget's."""
    if not name.startswith(BUDGET_PREFIX):
        return None
    pid = name[len(BUDGET_PREFIX) :].partition("-")[0]
    return int(pid) if pid.isdigit() else None


def remove_orphan_groups(support: CgroupSupport | None = None) -> int:
    """Remove the program groups whose supervisor is dead (killed outright, with its process group,
    before it could remove them), and the budgets whose grader is; what is left in them is killed.
    How many were removed.

    Groups of live supervisors (another submission graded at the same time) are left alone.
    """
    support = support if support is not None else cgroup_limits.detect()
    removed = 0
    for path in leftover_groups(support):
        # A program's group is named after its supervisor, a submission's budget after its grader.
        suffix = path.name[len(GROUP_PREFIX) :]
        owner = int(suffix) if suffix.isdigit() else budget_owner(path.name)
        if owner is None:
            continue
        try:
            os.kill(owner, 0)
            continue  # its supervisor lives
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # alive, another user's
        removed += empty_and_remove(str(path))
    return removed


def leftover_groups(support: CgroupSupport | None = None) -> list[Path]:
    """Program groups that still exist (for tests and ``doctor``)."""
    support = support if support is not None else cgroup_limits.detect()
    found: list[Path] = []
    for _, parent in support.parents:
        found += [path for path in Path(parent).glob(f"{GROUP_PREFIX}*") if path.name != V2_LEAF]
    return found
