"""Turn an ``--impl`` string into an adapter."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from conformance.adapter import Adapter
from conformance.adapters.binding import BindingAdapter
from conformance.adapters.settings import ImplSettings

IMPL_FORMS = (
    "reference                 the bundled Python reference, in process",
    "python:MODULE[:ATTR]      an Adapter, an adapter factory, or a binding module, in process",
    "cmd:'COMMAND LINE'        any program speaking the JSON-lines protocol (spec/protocol.md)",
    "pi-course:PATH            a course repository, its packages/pi-course, or a folder of compiled modules (Node.js 18+)",
    "pi-ai:PATH                an installed @earendil-works/pi-ai (a folder holding node_modules/, or the package), profile pi-ai-1",
)


class ImplSpecError(ValueError):
    """An ``--impl`` value that names no usable implementation."""


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
    module_name, _, attribute = target.partition(":")
    if not module_name:
        raise ImplSpecError("python: needs a module, as in python:my_port.adapter:ADAPTER")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ImplSpecError(f"cannot import {module_name!r}: {error}") from error
    if not attribute:
        return BindingAdapter(module, name=module_name, version=str(getattr(module, "__version__", "")))
    try:
        target_object = getattr(module, attribute)
    except AttributeError as error:
        raise ImplSpecError(f"{module_name!r} has no attribute {attribute!r}") from error
    if isinstance(target_object, Adapter):
        return target_object
    if callable(target_object) and not isinstance(target_object, type(module)):
        made = target_object()
        if isinstance(made, Adapter):
            return made
        return BindingAdapter(made, name=f"{module_name}:{attribute}")
    return BindingAdapter(target_object, name=f"{module_name}:{attribute}")


def _command(command: str, settings: ImplSettings) -> Adapter:
    from conformance.adapters.process import ProcessAdapter, ProcessOptions, parse_command

    try:
        argv = parse_command(command)
    except ValueError as error:
        raise ImplSpecError(str(error)) from error
    return ProcessAdapter(ProcessOptions.from_settings(argv, settings))


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
