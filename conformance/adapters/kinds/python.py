"""``python:MODULE[:ATTR]``: an Adapter, an adapter factory or a binding module, imported into this process."""

from __future__ import annotations

import importlib
from types import ModuleType

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds.base import ImplKind, ImplSpecError
from conformance.adapters.settings import ImplSettings
from conformance.model.profiles import get_profile


class Python(ImplKind):
    """A port in Python, reached in process: fast, but unsandboxed (grading needs ``--trust-python``)."""

    name = "python"
    usage = "python:MODULE[:ATTR]"
    meaning = "an Adapter, an adapter factory, or a binding module, in process"
    separate_process = False
    imports_code = True

    def example(self, profile: str) -> str | None:
        # The profile's bundled port in the checkout (examples/), which passes every case.
        port = get_profile(profile).example_port
        if port is None:
            return None
        return f"in a checkout, PYTHONPATH=examples with --impl {self.name}:{port} (a port that passes every case)"

    def make_adapter(self, target: str, settings: ImplSettings, profile: str) -> Adapter:
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
