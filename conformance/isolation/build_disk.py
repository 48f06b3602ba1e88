"""The disk a build writes on: a size-capped tmpfs at its workspace, so files it deleted still count.

Measuring the files a build can see misses one it deleted while it still holds it open: such
a build held 3 GB of host disk against the 1 GiB cap (issue 32). Two measures, the first where
it can be had:

- **a tmpfs of its own** (the grader is root, as on a grading host): the workspace is a tmpfs
  of :func:`tmpfs_size` bytes and ``nr_inodes``, mounted before the submission is copied in.
  The kernel refuses a write past it (``ENOSPC``), deleted-but-open files included, and the
  used blocks (:func:`used_bytes`) are what the build's watch measures. Its pages are charged
  to the memory cgroup of the process that wrote them, that is the build's group, inside the
  submission's budget (``budget.py``), and they stay charged there after the build's own
  group is gone: a build that fills its disk takes that from the memory its adapters get.
  Unmounted (:func:`unmount`) when the workspace is removed; a grading worker that was killed
  first leaves it to the batch (:func:`unmount_below`).
- **otherwise** the build's processes' open files are read from ``/proc``
  (:func:`open_deleted_bytes`): every deleted file one of them holds counts, once.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import sys
from pathlib import Path

_MS_NOSUID = 2
_MS_NODEV = 4
_MNT_DETACH = 2
_DELETED = " (deleted)"


def tmpfs_size(cap_bytes: int) -> int:
    """The tmpfs's size for a disk cap: an eighth more, so the watch sees the cap passed before the kernel refuses."""
    return cap_bytes + cap_bytes // 8


def mount_capped(root: Path, size_bytes: int, max_entries: int) -> bool:
    """Mount a tmpfs of ``size_bytes`` and ``max_entries`` inodes at ``root`` (mode 0700); whether it was.

    Only root can (outside a user namespace of its own); anyone else gets False and the
    ``/proc`` measure.
    """
    if sys.platform != "linux" or os.geteuid() != 0:
        return False
    options = f"size={size_bytes},nr_inodes={max_entries},mode=0700".encode()
    libc = ctypes.CDLL(None, use_errno=True)
    status: int = libc.mount(b"tmpfs", os.fsencode(root), b"tmpfs", _MS_NOSUID | _MS_NODEV, options)
    return status == 0


def unmount(root: Path) -> None:
    """Detach the tmpfs at ``root`` (its pages are freed once no process holds a file of it)."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).umount2(os.fsencode(root), _MNT_DETACH)


def unmount_below(folder: Path) -> None:
    """Detach every mount below ``folder`` (what a killed grading worker's builds left mounted)."""
    prefix = str(folder).rstrip("/") + "/"
    for path in sorted(_mount_points(), key=len, reverse=True):
        if path.startswith(prefix):
            unmount(Path(path))


def unmount_abandoned(folder: Path, prefix: str) -> list[Path]:
    """Unmount and remove the build roots ``folder/<prefix><pid>-*`` whose grading process ``pid`` is gone; those removed.

    A single ``grade`` killed mid-build cannot unmount its disk; the next build on the machine does.
    """
    removed = []
    folder = folder.resolve()
    for point in _mount_points():
        path = Path(point)
        if path.parent != folder or not path.name.startswith(prefix):
            continue
        owner = path.name.removeprefix(prefix).split("-", 1)[0]
        if owner.isdigit() and not _alive(int(owner)):
            unmount(path)
            if not os.path.ismount(path):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def _mount_points() -> list[str]:
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as file:
            points = [line.split()[4] for line in file if len(line.split()) > 4]
    except OSError:
        return []
    return [point.encode().decode("unicode_escape") if "\\" in point else point for point in points]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def used_bytes(root: Path) -> int:
    """Bytes used on the tmpfs mounted at ``root`` (deleted-but-open files included); 0 when none is mounted there."""
    if not os.path.ismount(root):
        return 0
    try:
        info = os.statvfs(root)
    except OSError:
        return 0
    return (info.f_blocks - info.f_bfree) * info.f_frsize


def open_deleted_bytes(pids: list[int]) -> int:
    """Bytes of the deleted files that the processes ``pids`` still hold open, each file counted once."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for pid in pids:
        folder = f"/proc/{pid}/fd"
        try:
            descriptors = os.listdir(folder)
        except OSError:
            continue
        for descriptor in descriptors:
            path = f"{folder}/{descriptor}"
            try:
                if not os.readlink(path).endswith(_DELETED):
                    continue
                info = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total
