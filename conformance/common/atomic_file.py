"""Write a file whole or not at all: a temporary sibling, flushed and fsynced, then renamed over it.

A reader (or a grader killed mid-write) never sees half a report or half a gradebook, and a
file that was there before stays intact until its replacement is complete.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Read once, at import: mkstemp creates files 0600, and reports should get the usual mode.
_UMASK = os.umask(0)
os.umask(_UMASK)


@contextmanager
def private_output() -> Iterator[None]:
    """Within, everything this process writes is its user's alone: folders 0700, files 0600.

    For the commands that write what a submission must never read (a private set, a gradebook,
    reports), where student code runs as another user (``--run-as``, ``--run-as-range``). The
    umask before is restored on leaving (a command called in process leaves the caller's alone).
    """
    global _UMASK
    before = _UMASK
    _UMASK = 0o077
    os.umask(_UMASK)
    try:
        yield
    finally:
        _UMASK = before
        os.umask(before)


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically; its folder is created."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically; its folder is created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            os.fchmod(file.fileno(), 0o666 & ~_UMASK)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
