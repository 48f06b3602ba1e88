"""What every implementation kind is, and the parsed ``--impl`` value (:class:`Impl`) that asks its kind.

A kind is written ``NAME:TARGET`` (``pi-course:./repo``) or, with no target, ``NAME``
(``reference``). Everything that depends on the kind (which profiles it serves, whether its
folder is a submission, how it is built, isolated, named and started) is a property or a
method of its :class:`ImplKind`; nothing outside :mod:`conformance.adapters.kinds` looks at
the text before the colon.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from conformance.adapters.interface import Adapter

if TYPE_CHECKING:
    from conformance.adapters.course_chapters import DetectedChapter
from conformance.adapters.settings import ImplSettings
from conformance.model.profiles import DEFAULT_PROFILE


class ImplSpecError(ValueError):
    """An ``--impl`` value that names no usable implementation."""


@dataclass(frozen=True)
class Built:
    """A finished build: its failure report (None when it built), the target to run, and how to remove the copy."""

    report: str | None
    target: str
    remove: Callable[[], None]


class ImplKind:
    """One kind of implementation: how ``--impl`` writes it and everything that differs by kind."""

    #: The text before ``:`` in ``--impl`` (the whole value when :attr:`takes_target` is false).
    name: ClassVar[str]
    #: How ``--impl`` writes it (``pi-course:PATH``), and what it is: one line of the CLI's help.
    usage: ClassVar[str]
    meaning: ClassVar[str]
    #: Whether a target follows the colon (``reference`` has none).
    takes_target: ClassVar[bool] = True
    #: The one profile it implements; None: any, which the implementation states in its handshake.
    profile: ClassVar[str | None] = None
    #: Its code runs in a process of its own, under the sandbox and the limits; else in the grader's process.
    separate_process: ClassVar[bool] = True
    #: Its target is a submission folder: named by that folder, and the default of ``grade-batch --impl-template``.
    folder_target: ClassVar[bool] = False
    #: Its target is split like a shell command line (``grade-batch`` shell-quotes ``{path}`` and ``{name}``).
    shell_target: ClassVar[bool] = False
    #: Its code is the course's TypeScript: failure hints about that code are always shown.
    course_code: ClassVar[bool] = False
    #: Its code is imported into this process: graded only with ``--trust-python``, imported before ``run`` starts pytest.
    imports_code: ClassVar[bool] = False
    #: Every instance reports the same adapter name, so a matrix column is named by its folder.
    same_adapter_name: ClassVar[bool] = False
    #: The profile whose expected values were read from this kind's behaviour (the course's
    #: reference; pi-ai-1's upstream package): when it fails a case, the case may be wrong.
    reference_of: ClassVar[str | None] = None
    #: It has a build step of its own (``--build`` runs it).
    builds: ClassVar[bool] = False
    #: The modules a grading worker imports to run it: the fork server imports them once, before any fork.
    preload: ClassVar[tuple[str, ...]] = ()

    @property
    def prefix(self) -> str:
        """How ``--impl`` begins for this kind: ``pi-course:``, or the whole value (``reference``) when it takes no target."""
        return f"{self.name}:" if self.takes_target else self.name

    @classmethod
    def form(cls) -> str:
        """The help line: usage, then meaning, in columns."""
        return f"{cls.usage:<25} {cls.meaning}"

    def make_adapter(self, target: str, settings: ImplSettings, profile: str) -> Adapter:
        """Start the implementation, told it is checked against ``profile``; :class:`ImplSpecError` if it cannot be."""
        raise NotImplementedError

    def example(self, profile: str) -> str | None:
        """How to name one of this kind that is checked against ``profile``, with what it is: advice for a mismatch; None if none fits."""
        return None

    def refusal(self, error: Exception) -> ImplSpecError:
        """Its transport's error, as the kind says it: headed by its prefix (``pi-course: 'x' is not a folder``).

        The transports do not spell the kind that starts them; a message of a shared check that
        names the kind itself already (Node.js's, ``pi-ai: needs Node.js ...``) is kept as it is.
        """
        text = str(error)
        return ImplSpecError(text if text.startswith(f"{self.name}:") else f"{self.prefix} {text}")

    def folder_of(self, target: str) -> str:
        """The submission folder a folder target names, without its options (``?runtime=bun``)."""
        return target

    def layout_problem(self, target: str) -> str | None:
        """Why the target is not a submission of this kind (status ``not-a-project``), or None."""
        return None

    def unbuilt_problem(self, target: str) -> str | None:
        """One line when the target has to be built before it can run (``run`` without ``--build``), or None."""
        return None

    def build(self, target: str, settings: ImplSettings) -> Built | None:
        """Build the target before it is graded; None when this kind (or this target) has nothing to build."""
        return None

    def detected_chapter(self, target: str) -> DetectedChapter | None:
        """The course chapter the target is at, read from its files; None: this kind says nothing (every lab is graded)."""
        return None

    def process_needs(self, build: bool) -> list[Path]:
        """What its processes read besides the submission (the adapter, the runtime): for ``--run-as`` to check."""
        return []

    def isolated_labs(self, target: str) -> Mapping[str, frozenset[str]]:
        """Per lab, the earlier labs whose code its cases never run (lab isolation: :mod:`..lab_isolation`); none by default."""
        return {}

    def is_reference(self, target: str, profile: str) -> bool:
        """Whether ``target`` is the implementation ``profile``'s expected values were read from.

        By default every target of a kind that is :attr:`reference_of` the profile; a kind whose
        targets can be other versions or forks of the reference narrows it (see ``pi-ai:``).
        """
        return self.reference_of == profile


@dataclass(frozen=True)
class Impl:
    """An ``--impl`` value, parsed once: its kind and target."""

    spec: str
    kind: ImplKind
    target: str

    def __str__(self) -> str:
        """The ``--impl`` text it was parsed from: what help texts and messages print."""
        return self.spec

    @property
    def name(self) -> str:
        """Its name in reports when none is given: a submission folder's name, else the ``--impl`` value."""
        if self.kind.folder_target and self.target:
            return Path(self.kind.folder_of(self.target)).expanduser().resolve().name or self.spec
        return self.spec

    def adapter(self, settings: ImplSettings | None = None, profile: str | None = None) -> Adapter:
        """Start it (:class:`ImplSpecError` when it cannot be), told the profile it is checked against.

        Without ``profile``: the one profile its kind implements, else the default profile.
        """
        return self.kind.make_adapter(self.target, settings or ImplSettings(), profile or self.kind.profile or DEFAULT_PROFILE)

    def column_name(self, adapter: Adapter) -> str:
        """Its name next to other implementations (a matrix column): as its handshake named it, unless all share one."""
        return self.name if self.kind.same_adapter_name else adapter.name or self.spec

    def at(self, target: str) -> Impl:
        """The same kind with another target (the built copy of a submission)."""
        return Impl(f"{self.kind.name}:{target}", self.kind, target)

    def is_reference(self, profile: str) -> bool:
        """Whether it is the implementation ``profile``'s expected values were read from (see :attr:`ImplKind.reference_of`)."""
        return self.kind.is_reference(self.target, profile)

    def layout_problem(self) -> str | None:
        """Why this is not a submission of its kind, or None."""
        return self.kind.layout_problem(self.target)

    def unbuilt_problem(self) -> str | None:
        """Why it cannot run until it is built (see :meth:`ImplKind.unbuilt_problem`), or None."""
        return self.kind.unbuilt_problem(self.target)

    def build(self, settings: ImplSettings) -> Built | None:
        """Build it (see :meth:`ImplKind.build`)."""
        return self.kind.build(self.target, settings)

    def detected_chapter(self) -> DetectedChapter | None:
        """The course chapter it is at (see :meth:`ImplKind.detected_chapter`)."""
        return self.kind.detected_chapter(self.target)

    def process_needs(self, build: bool) -> list[Path]:
        """What its processes read besides the submission, ``build`` or not (see :meth:`ImplKind.process_needs`)."""
        return self.kind.process_needs(build)

    def isolated_labs(self) -> Mapping[str, frozenset[str]]:
        """Per lab, the earlier labs whose code its cases never run (see :meth:`ImplKind.isolated_labs`)."""
        return self.kind.isolated_labs(self.target)

    def planned_isolation(self, settings: ImplSettings) -> str:
        """The isolation it gets (or would have got) with ``settings``: ``bwrap``, ``none`` or ``in-process``."""
        if not self.kind.separate_process:
            return "in-process"
        from conformance.isolation.sandbox import SandboxUnavailable, choose_isolation

        try:
            return choose_isolation(settings.sandbox)
        except SandboxUnavailable:
            return "none"

    def planned_limits(self, settings: ImplSettings) -> str:
        """Which resource limits hold for its programs with ``settings``, for reports."""
        if not self.kind.separate_process:
            return "none (in process)"
        from conformance.isolation.limits import describe
        from conformance.isolation.sandbox import tmpfs_size_supported

        return describe(settings.resource_limits(), self.planned_isolation(settings) == "bwrap" and tmpfs_size_supported())

    def isolation_of(self, adapter: Adapter) -> str:
        """The isolation ``adapter`` (one of this implementation's) runs under."""
        return adapter.isolation if self.kind.separate_process else "in-process"

    def trust_problem(self, trust_python: bool) -> str | None:
        """Why grading must refuse it: code imported into the grader's process without ``--trust-python``; or None.

        Such code runs inside the grader's own process: no sandbox can hold it, so it is
        graded only when staff vouch for it.
        """
        if self.kind.imports_code and not trust_python:
            return (
                f"{self.spec}: {self.kind.name}: implementations run inside the grader's process, unsandboxed; "
                "grade them only if you trust their code, with --trust-python"
            )
        return None
