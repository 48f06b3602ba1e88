"""The registry of implementation kinds: ``--impl`` is parsed here, once, into an :class:`Impl`.

Each kind is one module holding one :class:`ImplKind`; :data:`KINDS` lists them, in the
order the CLI's help shows them. Adding a kind is a module and an entry here. Every
question that depends on the kind (profiles, layout, build, isolation, names, trust,
adapter) is asked of the parsed value, so no other module reads the prefix of ``--impl``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds.base import Built, Impl, ImplKind, ImplSpecError
from conformance.adapters.kinds.command import Command
from conformance.adapters.kinds.course import Course
from conformance.adapters.kinds.pi_agent_core import PiAgentCore
from conformance.adapters.kinds.pi_ai import PiAi
from conformance.adapters.kinds.python import Python
from conformance.adapters.kinds.reference import Reference
from conformance.adapters.settings import ImplSettings

__all__ = [
    "BUILT_KINDS",
    "COURSE_CODE_KINDS",
    "IMPL_FORMS",
    "IN_PROCESS_KINDS",
    "KINDS",
    "PRELOAD_MODULES",
    "PROCESS_GROUP",
    "Built",
    "Impl",
    "ImplKind",
    "ImplSpecError",
    "bundled_impl",
    "default_impl",
    "default_template",
    "impl_examples",
    "parse_impl",
    "prefixes",
    "profile_problem",
    "resolve_adapter",
    "submission_impl",
    "submission_kind",
    "submission_spec",
]

KINDS: Final[tuple[ImplKind, ...]] = (Reference(), Python(), Command(), Course(), PiAi(), PiAgentCore())
_BY_NAME: Final = {kind.name: kind for kind in KINDS}
#: One help line per kind, for the epilog of every command that takes ``--impl``.
IMPL_FORMS: Final = tuple(kind.form() for kind in KINDS)


def prefixes(which: Callable[[ImplKind], bool]) -> str:
    """The kinds ``which`` selects, as ``--impl`` begins them (``cmd:, pi-course:``): for help texts and group titles."""
    return ", ".join(kind.prefix for kind in KINDS if which(kind))


#: The title of the option group about programs run in processes of their own (the sandbox, the limits, the build).
PROCESS_GROUP: Final = f"process implementations ({prefixes(lambda kind: kind.separate_process)})"
#: The kinds ``--build`` builds, the kinds whose code is the course's TypeScript, the kinds imported into the grader.
BUILT_KINDS: Final = prefixes(lambda kind: kind.builds)
COURSE_CODE_KINDS: Final = prefixes(lambda kind: kind.course_code)
IN_PROCESS_KINDS: Final = prefixes(lambda kind: kind.imports_code)
#: Every module some kind's grading worker imports, in kind order, each once (see :attr:`ImplKind.preload`).
PRELOAD_MODULES: Final = tuple(dict.fromkeys(module for kind in KINDS for module in kind.preload))


class _Unknown(ImplKind):
    """What an ``--impl`` of no known kind parses to: starting it says which forms there are."""

    name = "?"
    usage = "?"
    meaning = "no known kind"
    separate_process = False

    def make_adapter(self, target: str, settings: ImplSettings, profile: str) -> Adapter:
        raise ImplSpecError(f"unknown implementation {target!r}; use one of:\n  " + "\n  ".join(IMPL_FORMS))


def parse_impl(spec: str) -> Impl:
    """``spec`` parsed; a value of no known kind parses too, and fails (:class:`ImplSpecError`) when started.

    Lenient on purpose: grading reports an unknown kind as the submission's ``invalid``
    status, where every other failure to start is reported.
    """
    name, _, target = spec.partition(":")
    kind = _BY_NAME.get(name)
    if kind is None:
        return Impl(spec, _Unknown(), spec)
    return Impl(spec, kind, target)


def resolve_adapter(spec: str, settings: ImplSettings | None = None) -> Adapter:
    """Start the implementation an ``--impl`` value names."""
    return parse_impl(spec).adapter(settings)


def profile_problem(impl: Impl, profile: str, option: str = "--impl") -> str | None:
    """Why ``impl`` cannot be checked against ``profile`` (its kind implements another one only), or None."""
    owner = impl.kind.profile
    if owner is None or owner == profile:
        return None
    fits = [kind.name + (":" if kind.takes_target else "") for kind in KINDS if kind.profile == profile]
    either = " or ".join(sorted(kind.usage for kind in KINDS if kind.profile is None))
    instead = f"{' or '.join(fits)}, {either}" if fits else either
    return (
        f"{option} {impl.spec}: a {impl.kind.name} implementation is profile {owner}, but grading is for --profile {profile}; "
        f"grade it with --profile {owner}, or give {option} as {instead}"
    )


def impl_examples(profile: str) -> str | None:
    """How to name an implementation of ``profile`` on the command line, one example per kind that has one; None if none has."""
    # The kinds of that one profile first (pi-ai: before python: for pi-ai-1), then those of any.
    examples = [example for kind in sorted(KINDS, key=lambda kind: kind.profile != profile) if (example := kind.example(profile))]
    return ", or ".join(examples) or None


def default_impl(profile: str) -> Impl | None:
    """``--impl`` when none is given: the bundled implementation of ``profile``, if it has one."""
    try:
        return bundled_impl(profile)
    except KeyError:
        return None


def bundled_impl(profile: str) -> Impl:
    """The implementation bundled for ``profile`` (the course's reference); KeyError if it has none."""
    kind = next((kind for kind in KINDS if kind.profile == profile and not kind.takes_target), None)
    if kind is None:
        raise KeyError(profile)
    return Impl(kind.name, kind, "")


def submission_kind(profile: str) -> ImplKind:
    """The kind a submission folder of ``profile`` is (what ``grade-batch`` grades by default); KeyError if none."""
    kind = next((kind for kind in KINDS if kind.profile == profile and kind.folder_target), None)
    if kind is None:
        raise KeyError(profile)
    return kind


def submission_spec(profile: str, folder: Path | str) -> str:
    """The ``--impl`` of the submission folder ``folder`` (with the kind's options, if any) of ``profile``, as text to print."""
    return submission_impl(profile, folder).spec


def submission_impl(profile: str, folder: Path | str) -> Impl:
    """The submission folder ``folder`` (with the kind's options, if any) of ``profile``, as an implementation to run.

    With ``folder`` ``{path}``: the default ``grade-batch --impl-template``.
    """
    kind = submission_kind(profile)
    return Impl(f"{kind.name}:{folder}", kind, str(folder))


def default_template(profile: str) -> str:
    """``grade-batch --impl-template`` when none is given: a submission folder of ``profile``'s kind; KeyError if none."""
    return f"{submission_kind(profile).name}:{{path}}"
