"""A submission copied into a build's workspace, and that workspace removed, whatever the tree holds.

The copy holds regular files, folders and symbolic links (recreated, never followed), and
leaves out what the build must not see or run:

* every entry named ``.git`` or ``node_modules``, folder, file or link alike: a link named
  ``node_modules`` would put the submission's own ``tsc`` on the build's path, and a ``.git``
  file or link points git at a repository outside the copy;
* every link that resolves outside the copy (an absolute target, ``../..``, or a chain of
  links inside that climbs out): the grader's own compiler reads the copy, and must read
  nothing else;
* sockets, pipes and devices.

The walks are iterative, never recursive: a tree 1,500 folders deep or a path 5,000
characters long is refused with a reason (:class:`SubmissionTooLarge`) instead of
exhausting Python's stack or the kernel's path length, and :func:`remove_tree` deletes
whatever a build left however deep it goes.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

#: Names never copied into the workspace, whatever kind of entry holds them.
SKIPPED_NAMES = frozenset({".git", "node_modules"})
#: A submission larger than this (without ``.git`` and ``node_modules``) is not built.
MAX_COPY_BYTES = 256 * 1024 * 1024
MAX_COPY_ENTRIES = 20_000
#: Folders below the submission's root, and characters of a path inside it: far past any
#: course project (``packages/pi-course/src/...`` is four deep), far below the kernel's 4,096.
MAX_COPY_DEPTH = 64
MAX_COPY_PATH_CHARS = 1024


class SubmissionTooLarge(RuntimeError):
    """The submission exceeds a cap of the copy: bytes, entries, depth or path length."""


def copy_submission(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` as the module docstring says; :class:`SubmissionTooLarge` past the caps.

    ``OSError`` (an unreadable folder, a name the file system refuses) propagates: the
    caller reports the submission as not buildable, with the reason.
    """
    budget = _Budget()
    links: list[str] = []
    pending = [(str(source), str(target), 0)]
    while pending:
        folder, into, depth = pending.pop()
        if depth > MAX_COPY_DEPTH:
            raise SubmissionTooLarge(f"folders nested more than {MAX_COPY_DEPTH} deep")
        os.mkdir(into, mode=0o755)
        with os.scandir(folder) as entries:
            for entry in entries:
                budget.entry(os.path.join(into, entry.name), len(str(target)))
                if entry.name in SKIPPED_NAMES:
                    continue
                destination = os.path.join(into, entry.name)
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    os.symlink(os.readlink(entry.path), destination)
                    links.append(destination)
                elif stat.S_ISDIR(info.st_mode):
                    pending.append((entry.path, destination, depth + 1))
                elif stat.S_ISREG(info.st_mode):
                    budget.take(info.st_size)
                    shutil.copyfile(entry.path, destination, follow_symlinks=False)
                    os.chmod(destination, 0o755 if info.st_mode & 0o111 else 0o644)
    drop_escaping_links(target, links)


class _Budget:
    """What is left of the copy's caps."""

    def __init__(self) -> None:
        self.bytes = MAX_COPY_BYTES
        self.entries = MAX_COPY_ENTRIES

    def entry(self, destination: str, root_chars: int) -> None:
        self.entries -= 1
        if self.entries < 0:
            raise SubmissionTooLarge(f"more than {MAX_COPY_ENTRIES} files")
        if len(destination) - root_chars > MAX_COPY_PATH_CHARS:
            raise SubmissionTooLarge(f"a path longer than {MAX_COPY_PATH_CHARS} characters")

    def take(self, size: int) -> None:
        self.bytes -= size
        if self.bytes < 0:
            raise SubmissionTooLarge(f"more than {MAX_COPY_BYTES // (1024 * 1024)} MiB")


def drop_escaping_links(root: Path, links: list[str]) -> None:
    """Remove each link of ``links`` that resolves (or, dangling, would resolve) outside ``root``.

    Removing one link can change where another resolves (a chain through it is then read
    lexically), so the check repeats until nothing more is removed.
    """
    inside = os.path.realpath(root)
    kept = list(links)
    changed = True
    while changed:
        changed = False
        for link in list(kept):
            resolved = os.path.realpath(link)
            if resolved != inside and not resolved.startswith(inside + os.sep):
                os.unlink(link)
                kept.remove(link)
                changed = True


def chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give ``root`` and everything under it (links themselves, not their targets) to ``uid``:``gid``."""
    pending = [str(root)]
    os.chown(root, uid, gid, follow_symlinks=False)
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                os.chown(entry.path, uid, gid, follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)


def remove_tree(root: Path) -> None:
    """Delete ``root`` and everything under it, however deep: never raises.

    Each folder is opened relative to its parent's descriptor, so no path is ever longer
    than one name, and only one folder is open at a time (the way back up is ``..``).
    Whatever cannot be removed (a folder the build made unreadable) is left to
    :func:`shutil.rmtree` with ``ignore_errors``.
    """
    try:
        _remove_tree(root)
    except (OSError, RecursionError):
        pass
    shutil.rmtree(root, ignore_errors=True)


def _remove_tree(root: Path) -> None:
    if not root.is_dir() or root.is_symlink():
        root.unlink(missing_ok=True)
        return
    names: list[str] = []  # the folders entered below root, outermost first
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        while True:
            below = _unlink_files(fd)
            if below is not None:
                child = os.open(below, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd, names = child, [*names, below]
                continue
            if not names:
                break
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(root)


def _unlink_files(fd: int) -> str | None:
    """Delete every entry but folders in the folder open as ``fd``; the name of one folder left, if any."""
    folder = None
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folder = folder or entry.name
            else:
                os.unlink(entry.name, dir_fd=fd)
    return folder
