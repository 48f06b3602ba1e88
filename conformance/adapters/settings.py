"""Options for implementations that run as a separate process (``cmd:``, ``pi-course:``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from conformance.isolation.limits import Limits
from conformance.isolation.sandbox import SandboxMode
from conformance.isolation.staff_build import DEFAULT_STAFF_BUILD, StaffBuild

#: How long a program may take to load the implementation's modules (its ``preload``,
#: spec/protocol.md), by default: a budget of its own, apart from every case's timeout.
DEFAULT_LOAD_TIMEOUT_S: Final = 30.0


@dataclass
class ImplSettings:
    """What the command line says about starting an implementation's process."""

    env: dict[str, str] = field(default_factory=dict)
    #: ``--cpu-limit`` (CPU seconds per process; None: the default of :class:`Limits`).
    cpu_limit_s: int | None = None
    #: ``--memory-limit`` (MiB in total with a memory cgroup, else per process; None: the default).
    memory_limit_mb: int | None = None
    #: ``--pids-limit`` (processes and threads at once; None: the default).
    pids_limit: int | None = None
    #: ``--tmp-size`` (MiB of the sandbox's private /tmp; None: the default).
    tmp_size_mb: int | None = None
    #: ``--load-timeout``: seconds the program may take to load the implementation (None: :data:`DEFAULT_LOAD_TIMEOUT_S`).
    load_timeout_s: float | None = None
    #: ``--no-limits``: no default limit at all (the ones given explicitly still hold).
    limits: bool = True
    build: bool = False
    #: ``--sandbox``: ``auto`` (bwrap when it works here), ``bwrap`` or ``none``.
    sandbox: SandboxMode = "auto"
    #: ``--run-as``: (uid, gid) that student processes (builds and runs) run as; None: the grader's user.
    run_as: tuple[int, int] | None = None
    #: Where builds make their throwaway workspaces (default: the system's temporary folder).
    build_root: Path | None = None
    #: The staff files pinned over the submission's and the grader's build command (the rubric's ``build:``).
    staff_build: StaffBuild = DEFAULT_STAFF_BUILD

    def resource_limits(self) -> Limits:
        """The limits every program of the implementation runs under (its build: ``.for_build()``)."""
        base = Limits() if self.limits else Limits.off()
        given = {
            "cpu_s": self.cpu_limit_s,
            "build_cpu_s": self.cpu_limit_s,
            "memory_mb": self.memory_limit_mb,
            "pids": self.pids_limit,
            "tmp_mb": self.tmp_size_mb,
        }
        return replace(base, **{name: value for name, value in given.items() if value is not None})
