"""Turn an ``--impl`` string into an adapter."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

from conformance.adapter import Adapter
from conformance.adapters.settings import ImplSettings

IMPL_FORMS = (
    "reference                 the bundled Python reference, in process",
    "python:MODULE[:ATTR]      an Adapter, an adapter factory, or a binding module, in process",
    "cmd:'COMMAND LINE'        any program speaking the JSON-lines protocol (spec/protocol.md)",
    "pi-course:PATH            a course repository, its packages/pi-course, or a folder of compiled modules (Node.js 18+)",
    "pi-ai:PATH                an installed @earendil-works/pi-ai (a folder holding node_modules/, or the package), profile pi-ai-1;"
    " options ?package=NAME (another package under PATH) and &runtime=bun",
)


class ImplSpecError(ValueError):
    """An ``--impl`` value that names no usable implementation."""


def untrusted_in_process(impl: str, trust_python: bool) -> str | None:
    """Why grading must refuse ``impl`` (a ``python:`` submission without ``--trust-python``), or None.

    ``python:`` code runs inside the grader's own process: no sandbox can hold it, so it is
    graded only when staff vouch for it.
    """
    if impl.startswith("python:") and not trust_python:
        return (
            f"{impl}: python: implementations run inside the grader's process, unsandboxed; "
            "grade them only if you trust their code, with --trust-python"
        )
    return None


def resolve_adapter(spec: str, settings: ImplSettings | None = None) -> Adapter:
    """Build the adapter an ``--impl`` value names."""
    kind, _, rest = spec.partition(":")
    factories: dict[str, Callable[[str, ImplSettings], Adapter]] = {
        "reference": _reference,
        "python": _python,
        "cmd": _command,
        "pi-course": _pi_course,
        "pi-ai": _pi_ai,
    }
    factory = factories.get(kind)
    if factory is None:
        raise ImplSpecError(f"unknown implementation {spec!r}; use one of:\n  " + "\n  ".join(IMPL_FORMS))
    return factory(rest, settings or ImplSettings())


def _reference(_: str, __: ImplSettings) -> Adapter:
    from conformance.adapters.reference import create

    return create()


def _python(target: str, _settings: ImplSettings) -> Adapter:
    # Imported here: the binding needs asyncio, which a process that only runs programs never uses.
    from conformance.adapters.binding import BindingAdapter

    module_name, _, attribute = target.partition(":")
    if not module_name:
        raise ImplSpecError("python: needs a module, as in python:my_port.adapter:ADAPTER")
    module = import_target(module_name)
    if not attribute:
        return BindingAdapter(module, name=module_name, version=str(getattr(module, "__version__", "")))
    try:
        target_object = getattr(module, attribute)
    except AttributeError as error:
        public = sorted(name for name in vars(module) if not name.startswith("_"))
        listed = ", ".join(public[:12]) + (", ..." if len(public) > 12 else "")
        raise ImplSpecError(
            f"python:{target}: module {module_name!r} has no attribute {attribute!r}; it has: {listed or 'nothing public'}"
        ) from error
    if isinstance(target_object, Adapter):
        return target_object
    if callable(target_object) and not isinstance(target_object, type(module)):
        made = target_object()
        if isinstance(made, Adapter):
            return made
        return BindingAdapter(made, name=f"{module_name}:{attribute}")
    return BindingAdapter(target_object, name=f"{module_name}:{attribute}")


def import_target(module_name: str) -> ModuleType:
    """Import a ``python:`` module; any failure becomes one line naming the module, the error and the fix."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name or module_name.startswith(f"{error.name}."):
            fix = "check the name, and run from the folder that holds it or add that folder to PYTHONPATH"
        else:
            fix = f"{module_name!r} imports {error.name!r}, which is not installed here: install it into this environment"
        raise ImplSpecError(f"python:{module_name}: cannot import it: {error}; {fix}") from None
    except Exception as error:  # the port's own code failed while importing
        where = ""
        trace = error.__traceback__
        while trace is not None and trace.tb_next is not None:
            trace = trace.tb_next
        if trace is not None:
            where = f" (at {trace.tb_frame.f_code.co_filename}:{trace.tb_lineno})"
        raise ImplSpecError(f"python:{module_name}: importing it raised {type(error).__name__}: {error}{where}; fix that module") from None


def _command(command: str, settings: ImplSettings) -> Adapter:
    from conformance.adapters.process import ProcessAdapter, ProcessOptions, parse_command
    from conformance.adapters.sandbox import SandboxUnavailable, choose_isolation, command_sandbox

    try:
        argv = parse_command(command)
        isolation = choose_isolation(settings.sandbox)
    except (ValueError, SandboxUnavailable) as error:
        raise ImplSpecError(str(error)) from error
    sandbox = command_sandbox(argv, settings.env) if isolation == "bwrap" else None
    return ProcessAdapter(ProcessOptions.from_settings(argv, settings, sandbox=sandbox))


def _pi_course(path: str, settings: ImplSettings) -> Adapter:
    from conformance.adapters.pi_course import CourseLayoutError, pi_course_adapter

    try:
        return pi_course_adapter(path, settings)
    except CourseLayoutError as error:
        raise ImplSpecError(str(error)) from error


def _pi_ai(path: str, settings: ImplSettings) -> Adapter:
    from conformance.adapters.pi_ai import PiAiLayoutError, pi_ai_adapter

    try:
        return pi_ai_adapter(path, settings)
    except PiAiLayoutError as error:
        raise ImplSpecError(str(error)) from error
