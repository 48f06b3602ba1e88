"""A program, confined: the one way every kind that runs untrusted code starts and stops it.

The adapters' sessions (:mod:`conformance.adapters.session`) and the builds
(:mod:`conformance.adapters.course_build`) start their programs under the supervisor
(:func:`supervisor_argv`: subreaper, limits, the submission's budget, the user to run as), in a
minimal environment (:func:`minimal_environment`) marked with the session's marker, and stop
them with :func:`stop_tree`, which kills the whole tree and sweeps up anything that escaped it.
The sandbox (:mod:`.sandbox`) wraps the program before the supervisor does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from conformance.isolation.budget import program_support
from conformance.isolation.limits import Limits, remove_groups, supervisor_flags

SUPERVISOR = Path(__file__).resolve().parent / "supervisor.py"

#: Environment variable that marks every process of one session (see :func:`_sweep`).
SESSION_MARKER = "PI_CONFORMANCE_SESSION"
#: How long a supervisor has to stop its tree after SIGTERM.
_SUPERVISOR_GRACE_S = 2.0


def minimal_environment(extra: dict[str, str]) -> dict[str, str]:
    """Just enough environment to run an interpreter; nothing of the grader's secrets."""
    keep = ("PATH", "HOME", "TMPDIR", "SYSTEMROOT")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env.update(extra)
    return env


def stop_tree(process: subprocess.Popen[bytes], marker: str) -> None:
    """Kill a supervised program and everything it started; bounded by a few seconds."""
    pid = process.pid
    if process.poll() is None:
        # The supervisor kills its whole tree (daemonized children included) and exits.
        _signal(pid, signal.SIGTERM)
        try:
            process.wait(timeout=_SUPERVISOR_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    # Whatever is left: the process group (even after its leader exited), then the marked strays.
    _signal(pid, signal.SIGKILL, group=True)
    _sweep(marker)
    if process.poll() is None:
        _signal(pid, signal.SIGKILL)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    remove_groups(pid, program_support())  # the cgroups of a supervisor that was killed before it could remove them


def _signal(pid: int, number: signal.Signals, group: bool = False) -> None:
    try:
        if group:
            os.killpg(pid, number)
        else:
            os.kill(pid, number)
    except (ProcessLookupError, PermissionError):
        pass


def _sweep(marker: str) -> None:
    """SIGKILL every process whose environment carries this session's marker.

    The last resort for a process that left the supervisor's tree (its supervisor was
    killed): environments are inherited, so even a ``setsid`` grandchild carries it.
    """
    needle = f"{SESSION_MARKER}={marker}".encode()
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            _signal(int(entry.name), signal.SIGKILL)


def run_as_arguments(run_as: tuple[int, int] | None) -> dict[str, Any]:
    """``subprocess.Popen`` arguments that start a program as ``run_as`` (uid, gid) with no other group."""
    if run_as is None:
        return {}
    return {"user": run_as[0], "group": run_as[1], "extra_groups": []}


def supervisor_argv(program: list[str], limits: Limits | None = None, run_as: tuple[int, int] | None = None) -> list[str]:
    """``program`` under the supervisor (subreaper, ``limits``, the tree killed when it ends).

    ``limits`` defaults to :class:`Limits`'s defaults (those of a run; a build passes
    ``settings.resource_limits().for_build()``); :meth:`Limits.off` sets none. ``run_as``
    (uid, gid) is who the program runs as, once its cgroup and limits are set. The caller
    stops the program with :func:`stop_tree`, which also removes its cgroups if the
    supervisor could not.
    """
    # Below the submission's budget when one is open: its programs share one memory and pids limit.
    flags = supervisor_flags(limits if limits is not None else Limits(), program_support())
    if run_as is not None:  # the supervisor keeps the grader's rights; the program gets the user's
        flags = ["--uid", str(run_as[0]), "--gid", str(run_as[1]), *flags]
    # -I -S: isolated and without site-packages, so the supervisor starts fast and imports nothing of ours.
    return [sys.executable, "-I", "-S", str(SUPERVISOR), *flags, *program]
