"""Make the batch the reaper of what its dead workers leave behind (Linux).

A submission's program runs in a session of its own (so its grader can kill its whole
group), which means killing a worker's group does not reach it. When a worker dies
abruptly (the submission SIGKILLed it), that program is orphaned. With
``PR_SET_CHILD_SUBREAPER`` set, orphans of the batch's descendants are re-parented to the
batch rather than to init; :meth:`Reaper.sweep` then kills (with their groups) and reaps
every child that is not a live worker. Elsewhere this does nothing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36


class Reaper:
    """The batch's live workers, and the sweep of every other child of the batch process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # held while a worker starts, so a sweep never sees it unregistered
        self.workers: set[int] = set()
        self.enabled = False

    def enable(self) -> bool:
        """Become a child subreaper; False when the system cannot."""
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            self.enabled = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            self.enabled = False
        return self.enabled

    def disable(self) -> None:
        """Stop being a subreaper (after a last sweep)."""
        if self.enabled:
            self.sweep()
            try:
                ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
            except (OSError, AttributeError):
                pass
            self.enabled = False

    def sweep(self) -> list[int]:
        """Kill and reap the children of this process that are not registered workers; their pids."""
        if not self.enabled:
            return []
        with self.lock:
            strays = [pid for pid in _children(os.getpid()) if pid not in self.workers]
            for pid in strays:
                for kill in (os.killpg, os.kill):
                    try:
                        kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
        return strays


def _children(parent: int) -> list[int]:
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ")".
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1] == str(parent):
            children.append(int(entry.name))
    return children
