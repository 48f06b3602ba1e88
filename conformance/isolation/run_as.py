"""``--run-as USER``: student processes run as another, unprivileged user when the grader is root.

On a grading host where the grader runs as root (a Gradescope container, a CI runner),
the sandbox alone may be unavailable; running the build and the adapter as an unprivileged
user keeps them from reading what only root may read (the autograder's source, a held-out
set) and from signalling the grader. That user must be able to read what it runs: the
Python interpreter, the adapter, Node.js and the toolchain; :func:`run_as_problem` checks
that by asking the user itself.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Iterable
from pathlib import Path

from conformance.isolation.confine import run_as_arguments


class RunAsError(ValueError):
    """``--run-as`` cannot be used as given (one line)."""


def parse_run_as(text: str) -> tuple[int, int]:
    """A user name or numeric uid, as ``(uid, gid)``; a bare uid runs with the same gid."""
    if text.isdigit():
        return int(text), int(text)
    try:
        entry = pwd.getpwnam(text)
    except KeyError:
        raise RunAsError(f"--run-as {text}: no such user") from None
    return entry.pw_uid, entry.pw_gid


def run_as_problem(run_as: tuple[int, int], needed: Iterable[Path]) -> str | None:
    """Why student processes cannot run as ``run_as`` here (one line), or None.

    Needs root. The user is asked to read each of ``needed`` (a file) or list it (a folder).
    """
    if os.geteuid() != 0:
        return "--run-as needs the grader to run as root (it starts student processes as that user)"
    if run_as[0] == 0:
        return "--run-as root would run student code as root: give an unprivileged user (e.g. nobody)"
    # Asked with the shell (test -r), as the user: the grader's own Python need not be readable by it.
    probe = 'for p; do [ -r "$p" ] && { [ ! -d "$p" ] || [ -x "$p" ]; } || echo "$p"; done'
    try:
        result = subprocess.run(
            ["/bin/sh", "-c", probe, "sh", *(str(path) for path in needed)],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            cwd="/",
            **run_as_arguments(run_as),
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"--run-as: cannot start a process as uid {run_as[0]}: {error}"
    unreadable = result.stdout.split()
    if unreadable:
        return f"--run-as: uid {run_as[0]} cannot read {unreadable[0]}; install it where every user can read it"
    return None
