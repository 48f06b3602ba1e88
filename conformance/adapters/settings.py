"""Options for implementations that run as a separate process (``cmd:``, ``pi-course:``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from conformance.adapters.sandbox import SandboxMode


@dataclass
class ImplSettings:
    """What the command line says about starting an implementation's process."""

    env: dict[str, str] = field(default_factory=dict)
    cpu_limit_s: int | None = None
    memory_limit_mb: int | None = None
    build: bool = False
    #: ``--sandbox``: ``auto`` (bwrap when it works here), ``bwrap`` or ``none``.
    sandbox: SandboxMode = "auto"
    #: ``--run-as``: (uid, gid) that student processes (builds and runs) run as; None: the grader's user.
    run_as: tuple[int, int] | None = None
    #: Where builds make their throwaway workspaces (default: the system's temporary folder).
    build_root: Path | None = None
