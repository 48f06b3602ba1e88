"""How to start and supervise an implementation's program: argv, environment, limits, sandbox, user."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from conformance.adapters.interface import DEFAULT_SETTLE_DEADLINE_S
from conformance.adapters.protocol import DEFAULT_MAX_LINE_BYTES
from conformance.adapters.settings import DEFAULT_LOAD_TIMEOUT_S, ImplSettings
from conformance.isolation.limits import Limits
from conformance.isolation.limits import describe as describe_limits
from conformance.isolation.sandbox import Isolation, Sandbox, tmpfs_size_supported


@dataclass
class ProcessOptions:
    """How to start and supervise the implementation's process."""

    argv: list[str]
    cwd: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    #: CPU seconds and memory MiB: override ``limits`` (kept for callers that set only these).
    cpu_limit_s: int | None = None
    memory_limit_mb: int | None = None
    #: The program's resource limits (on by default; :meth:`Limits.off` for none).
    limits: Limits = field(default_factory=Limits)
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    handshake_timeout_s: float = 10.0
    #: How long a program whose handshake offers ``preload`` may take to import its implementation's
    #: modules, right after the handshake: a budget of its own (``--load-timeout``), so a cold import
    #: (TypeScript sources under bun, a slow top level) never eats the first case's timeout.
    load_timeout_s: float = DEFAULT_LOAD_TIMEOUT_S
    settle_deadline_s: float = DEFAULT_SETTLE_DEADLINE_S
    stop_grace_s: float = 1.0
    #: Run inside this bubblewrap sandbox; None runs the program as the grader's user, unconfined.
    sandbox: Sandbox | None = None
    #: (uid, gid) to run the program as (``--run-as``, the grader being root); None: the grader's own.
    run_as: tuple[int, int] | None = None
    #: The program is one of ours (the bundled Node.js adapters): it must seal every line it writes
    #: (spec/protocol.md, "Sealed lines"), so lines the implementation forges are refused.
    require_seal: bool = False

    @classmethod
    def from_settings(
        cls, argv: list[str], settings: ImplSettings, cwd: Path | None = None, sandbox: Sandbox | None = None
    ) -> ProcessOptions:
        """Options for ``argv`` with the command line's environment and limits."""
        return cls(
            argv,
            cwd=cwd,
            env=dict(settings.env),
            limits=settings.resource_limits(),
            sandbox=sandbox,
            run_as=settings.run_as,
            load_timeout_s=settings.load_timeout_s or DEFAULT_LOAD_TIMEOUT_S,
        )

    @property
    def isolation(self) -> Isolation:
        """How the program is confined: ``bwrap`` or ``none``."""
        return "none" if self.sandbox is None else "bwrap"

    @property
    def effective_limits(self) -> Limits:
        """The limits the program runs under: ``limits`` with ``cpu_limit_s`` and ``memory_limit_mb`` applied."""
        return self.limits.overridden(cpu_s=self.cpu_limit_s, memory_mb=self.memory_limit_mb)

    @property
    def limits_description(self) -> str:
        """Which limits hold for the program, and by what mechanism (see :func:`limits.describe`)."""
        return describe_limits(self.effective_limits, self.sandbox is not None and tmpfs_size_supported())
