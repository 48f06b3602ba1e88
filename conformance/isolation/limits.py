"""Per-submission resource limits: what they are, which kernel mechanism holds them here, and how to say so.

Every program a submission starts (its build and its runs) gets, on by default:

- **memory**, in total over all its programs and processes, tmpfs pages included: a cgroup
  (``memory.max`` in v2, ``memory.limit_in_bytes`` in v1); where none can be written, an
  address-space limit per process (``RLIMIT_AS``), which child processes get round;
- **processes and threads**: the cgroup's ``pids.max``; else ``RLIMIT_NPROC``, which counts
  every process of the user, so it is set to what the user runs already plus the limit;
- **CPU time**: ``RLIMIT_CPU`` per process (``SIGXCPU``, then ``SIGKILL`` a second later);
- **a written file's size**: ``RLIMIT_FSIZE`` (``SIGXFSZ``, or ``EFBIG``), the build log included;
- **the private /tmp** of the sandbox: a tmpfs of ``--size`` bytes (``ENOSPC`` past it).

:func:`detect` finds once per process which cgroup mechanism works here: a delegated cgroup v2
subtree with the memory and pids controllers, cgroup v1 memory (and pids) hierarchies the grader
can write, or none. The supervisor (``supervisor.py``) creates one group per program start under
the parent folders :func:`supervisor_flags` names (a submission's budget, ``budget.py``, which
holds the limits for all its programs together), moves the program into it, reports which
limit the kernel enforced, and removes the group once the program's tree is gone.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from dataclasses import dataclass, replace
from typing import Literal

MIB = 1024 * 1024
#: The defaults fit a 2-core, 4 GB machine grading two submissions at once (``--jobs 2``).
DEFAULT_MEMORY_MB = 1024
DEFAULT_PIDS = 256
DEFAULT_TMP_MB = 256
DEFAULT_CPU_S = 60
DEFAULT_BUILD_CPU_S = 120
DEFAULT_FILE_MB = 256
#: The name of each program's cgroup: this prefix and the supervisor's pid.
GROUP_PREFIX = "pi-conformance-"
V2_LEAF = "pi-conformance-grader"
_REMOVE_DEADLINE_S = 3.0

Mechanism = Literal["cgroup v2", "cgroup v1", "none"]
#: A controller's kind, as the supervisor's ``--cgroup KIND:DIR`` spells it.
GroupKind = Literal["unified", "memory", "pids"]


@dataclass(frozen=True)
class Limits:
    """What one program of a submission may use; None leaves that resource unlimited."""

    #: Total memory of the program's processes (tmpfs pages included) with a cgroup; else per process.
    memory_mb: int | None = DEFAULT_MEMORY_MB
    #: Processes and threads at once.
    pids: int | None = DEFAULT_PIDS
    #: Size of the sandbox's private ``/tmp`` (bubblewrap only).
    tmp_mb: int | None = DEFAULT_TMP_MB
    #: CPU seconds of each process of a run.
    cpu_s: int | None = DEFAULT_CPU_S
    #: CPU seconds of each process of a build (:meth:`for_build`).
    build_cpu_s: int | None = DEFAULT_BUILD_CPU_S
    #: Size of any one file the program writes.
    file_mb: int | None = DEFAULT_FILE_MB

    @classmethod
    def off(cls) -> Limits:
        """No limit at all (``--no-limits``): the grader as it was before limits existed."""
        return cls(memory_mb=None, pids=None, tmp_mb=None, cpu_s=None, build_cpu_s=None, file_mb=None)

    def for_build(self) -> Limits:
        """The limits of a build: the same, with the build's CPU seconds."""
        return replace(self, cpu_s=self.build_cpu_s)

    def overridden(self, cpu_s: int | None = None, memory_mb: int | None = None) -> Limits:
        """These limits with the CPU and memory given (each None keeps this one's)."""
        return replace(self, cpu_s=cpu_s or self.cpu_s, memory_mb=memory_mb or self.memory_mb)

    @property
    def any(self) -> bool:
        """Whether anything is limited."""
        return any(value is not None for value in (self.memory_mb, self.pids, self.tmp_mb, self.cpu_s, self.file_mb))


@dataclass(frozen=True)
class CgroupSupport:
    """Which cgroup mechanism works for this process, and where its programs' groups go."""

    mechanism: Mechanism
    #: (kind, parent folder) of each hierarchy a program's group is created in.
    parents: tuple[tuple[GroupKind, str], ...] = ()
    #: Why no cgroup (or only part of one) can be used here.
    reason: str = ""

    def has(self, kind: GroupKind) -> bool:
        """Whether the controller ``kind`` (``memory`` or ``pids``) holds through a group."""
        return any(found == kind or found == "unified" for found, _ in self.parents)


def supervisor_flags(limits: Limits, support: CgroupSupport | None = None) -> list[str]:
    """The supervisor's options for ``limits``: cgroups where they work here, rlimits for the rest.

    Ends with the two positional numbers the supervisor always takes: CPU seconds and the
    address-space bytes (0 for none; the address space is limited only where no memory
    cgroup holds the total).
    """
    support = support if support is not None else detect()
    flags: list[str] = []
    uses_groups = (limits.memory_mb is not None and support.has("memory")) or (limits.pids is not None and support.has("pids"))
    if uses_groups:
        for kind, parent in support.parents:
            flags += ["--cgroup", f"{kind}:{parent}"]
    address_space = 0
    if limits.memory_mb is not None:
        if support.has("memory"):
            flags += ["--memory", str(limits.memory_mb * MIB)]
        else:
            address_space = limits.memory_mb * MIB
    if limits.pids is not None:
        flags += ["--pids" if support.has("pids") else "--nproc", str(limits.pids)]
    if limits.file_mb is not None:
        flags += ["--fsize", str(limits.file_mb * MIB)]
    return [*flags, str(limits.cpu_s or 0), str(address_space)]


def describe(limits: Limits, tmpfs_capped: bool, support: CgroupSupport | None = None) -> str:
    """One line for reports, the gradebook and ``doctor``: which limits held, and by what.

    ``tmpfs_capped``: the program runs in the sandbox, whose bubblewrap sizes its ``/tmp``.

    For example ``cgroup v1 (memory 1024 MiB, pids 256), tmpfs 256 MiB, cpu 60 s, file 256 MiB``
    or ``rlimits only, no writable cgroup (address space 1024 MiB per process, ...)``.
    """
    if not limits.any:
        return "off"
    support = support if support is not None else detect()
    grouped, per_process = _held_by(limits, support)
    parts: list[str] = []
    if grouped:
        parts.append(f"{support.mechanism} ({', '.join(grouped)})")
    if tmpfs_capped and limits.tmp_mb is not None:
        parts.append(f"tmpfs {limits.tmp_mb} MiB")
    head = ", ".join([*parts, *per_process])
    if grouped:
        return head
    return f"rlimits only, no writable cgroup: {support.reason}" + (f" ({head})" if head else "")


def _held_by(limits: Limits, support: CgroupSupport) -> tuple[list[str], list[str]]:
    """The limits a cgroup holds for the whole program, and those held per process (rlimits)."""
    grouped: list[str] = []
    per_process: list[str] = []
    if limits.memory_mb is not None:
        if support.has("memory"):
            grouped.append(f"memory {limits.memory_mb} MiB")
        else:
            per_process.append(f"address space {limits.memory_mb} MiB per process")
    if limits.pids is not None:
        if support.has("pids"):
            grouped.append(f"pids {limits.pids}")
        else:
            per_process.append(f"processes {limits.pids} more for the user")
    if limits.cpu_s is not None:
        build = f" (build {limits.build_cpu_s} s)" if limits.build_cpu_s not in (None, limits.cpu_s) else ""
        per_process.append(f"cpu {limits.cpu_s} s per process{build}")
    if limits.file_mb is not None:
        per_process.append(f"file {limits.file_mb} MiB")
    return grouped, per_process


# -- detection ---------------------------------------------------------------------------------


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as file:
        return file.read()


def _subgroups(folder: str) -> list[str]:
    try:
        return [entry.path for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as file:
        file.write(text)


def own_cgroups(proc_cgroup: str) -> dict[str, str]:
    """``/proc/self/cgroup`` as controller -> path (``""`` for the cgroup v2 hierarchy; ``name=systemd`` kept as is)."""
    found: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def cgroup_mounts(mountinfo: str) -> dict[str, tuple[str, str]]:
    """Mounted cgroup hierarchies from ``/proc/self/mountinfo``: controller (``""`` for v2) -> (mount point, root)."""
    found: dict[str, tuple[str, str]] = {}
    for line in mountinfo.splitlines():
        head, separator, tail = line.partition(" - ")
        fields, extra = head.split(), tail.split()
        if not separator or len(fields) < 5 or len(extra) < 3:
            continue
        root, point = _unescape(fields[3]), _unescape(fields[4])
        if extra[0] == "cgroup2":
            found.setdefault("", (point, root))
        elif extra[0] == "cgroup":
            for option in extra[2].split(","):
                if option in ("memory", "pids"):
                    found.setdefault(option, (point, root))
    return found


def _unescape(text: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal (\040).
    return text.encode().decode("unicode_escape") if "\\" in text else text


def group_folder(mount: tuple[str, str], path: str) -> str | None:
    """The folder of the cgroup ``path`` in a hierarchy mounted at ``mount`` (None when the mount does not show it)."""
    point, root = mount
    if root != "/":
        if path != root and not path.startswith(root.rstrip("/") + "/"):
            return None
        path = path[len(root) :]
    return os.path.join(point, path.lstrip("/")) if path.strip("/") else point


def _probe_v1(parent: str, kind: GroupKind) -> str | None:
    """Why a program's group cannot be made under ``parent`` (None when it can)."""
    probe = os.path.join(parent, f"{GROUP_PREFIX}probe-{os.getpid()}")
    limit_file = "memory.limit_in_bytes" if kind == "memory" else "pids.max"
    try:
        os.mkdir(probe)
    except FileExistsError:
        pass
    except OSError as error:
        return f"cannot create a {kind} cgroup in {parent}: {error.strerror}"
    try:
        _write(os.path.join(probe, limit_file), str(64 * MIB) if kind == "memory" else "64")
        return None
    except OSError as error:
        return f"cannot set {limit_file} in {parent}: {error.strerror}"
    finally:
        try:
            os.rmdir(probe)
        except OSError:
            pass


def _v2_parent(folder: str) -> tuple[str | None, str]:
    """The v2 folder under which programs' groups get memory and pids, enabling them when delegated."""
    try:
        available = _read(os.path.join(folder, "cgroup.controllers")).split()
    except OSError as error:
        return None, f"cgroup v2 at {folder} is not readable: {error.strerror}"
    missing = [name for name in ("memory", "pids") if name not in available]
    if missing:
        return None, f"cgroup v2 at {folder} has no {' or '.join(missing)} controller"
    control = os.path.join(folder, "cgroup.subtree_control")
    try:
        if {"memory", "pids"} <= set(_read(control).split()):
            return folder, ""
        try:
            _write(control, "+memory +pids")
        except OSError as error:
            if error.errno is None or error.errno != 16:  # EBUSY: this group has processes, ours among them
                raise
            # No process may sit in a group whose controllers its children share: move the grader into a leaf.
            leaf = os.path.join(folder, V2_LEAF)
            os.makedirs(leaf, exist_ok=True)
            _write(os.path.join(leaf, "cgroup.procs"), str(os.getpid()))
            try:
                _write(control, "+memory +pids")
            except OSError:
                _write(os.path.join(folder, "cgroup.procs"), str(os.getpid()))  # back where it was
                raise
        return folder, ""
    except OSError as error:
        return None, f"cgroup v2 at {folder} is not delegated to this user (memory and pids cannot be enabled: {error.strerror})"


def detect_from(proc_cgroup: str, mountinfo: str) -> CgroupSupport:
    """Which cgroup mechanism works, given this process's ``/proc/self/cgroup`` and ``mountinfo``."""
    own, mounts = own_cgroups(proc_cgroup), cgroup_mounts(mountinfo)
    reasons: list[str] = []
    if "" in own and "" in mounts:
        folder = group_folder(mounts[""], own[""])
        if folder is not None:
            parent, reason = _v2_parent(folder)
            if parent is not None:
                return CgroupSupport("cgroup v2", (("unified", parent),))
            reasons.append(reason)
    parents: list[tuple[GroupKind, str]] = []
    v1_kinds: tuple[GroupKind, ...] = ("memory", "pids")
    for kind in v1_kinds:
        if kind not in own or kind not in mounts:
            reasons.append(f"no cgroup v1 {kind} hierarchy")
            continue
        folder = group_folder(mounts[kind], own[kind])
        if folder is None:
            reasons.append(f"this process's {kind} cgroup is not visible")
            continue
        problem = _probe_v1(folder, kind)
        if problem is None:
            parents.append((kind, folder))
        else:
            reasons.append(problem)
    if any(kind == "memory" for kind, _ in parents):
        return CgroupSupport("cgroup v1", tuple(parents), "; ".join(reasons))
    return CgroupSupport("none", (), "; ".join(reasons) or "no cgroup hierarchy is mounted")


@functools.cache
def detect() -> CgroupSupport:
    """Which cgroup mechanism works for this process (checked once; Linux only)."""
    try:
        return detect_from(_read("/proc/self/cgroup"), _read("/proc/self/mountinfo"))
    except OSError as error:
        return CgroupSupport("none", (), f"cgroups are not readable here: {error.strerror}")


# -- clean-up ------------------------------------------------------------------------------------


def remove_groups(supervisor_pid: int, support: CgroupSupport | None = None) -> None:
    """Kill what is left in the groups of the supervisor ``supervisor_pid`` and remove them.

    The supervisor removes its groups itself; this is for one that was killed before it could.
    Bounded by a few seconds.
    """
    support = support if support is not None else detect()
    for _, parent in support.parents:
        folder = os.path.join(parent, f"{GROUP_PREFIX}{supervisor_pid}")
        if os.path.isdir(folder):
            empty_and_remove(folder)


def empty_and_remove(folder: str, deadline_s: float = _REMOVE_DEADLINE_S) -> bool:
    """SIGKILL every process of the cgroup ``folder`` and of the groups below it, then remove them; whether it is gone."""
    deadline = time.monotonic() + deadline_s
    for child in _subgroups(folder):  # a submission's budget holds its programs' groups
        empty_and_remove(child, deadline_s)
    while True:
        try:
            members = [int(text) for text in _read(os.path.join(folder, "cgroup.procs")).split()]
        except (OSError, ValueError):
            members = []
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.rmdir(folder)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
