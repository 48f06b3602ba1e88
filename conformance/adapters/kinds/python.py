"""``python:MODULE[:ATTR]``: an Adapter, an adapter factory or a binding module, imported into this process."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds.base import ImplKind, ImplSpecError
from conformance.adapters.settings import ImplSettings
from conformance.common.user_interrupts import watching_interrupts
from conformance.model.profiles import get_profile

if TYPE_CHECKING:
    from conformance.adapters.binding import BindingAdapter


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
        module_name, _, attribute = target.partition(":")
        if not module_name:
            raise ImplSpecError("python: needs a module, as in python:my_port.adapter:ADAPTER")
        module = import_target(module_name)
        return _adapter_of(module, module_name, attribute, target, profile)


def _binding_class(profile: str) -> type[BindingAdapter]:
    """The binding adapter a binding module of ``profile`` is played through (pi-agent-core-1 has its own)."""
    # Imported here: the binding needs asyncio, which a process that only runs programs never uses.
    if profile == "pi-agent-core-1":
        from conformance.adapters.pi_agent_core_binding import PiAgentCoreBindingAdapter

        return PiAgentCoreBindingAdapter
    from conformance.adapters.binding import BindingAdapter

    return BindingAdapter


def _adapter_of(module: ModuleType, module_name: str, attribute: str, target: str, profile: str) -> Adapter:
    """The adapter ``python:target`` names in ``module``: the module as a binding, an Adapter, what a factory makes."""
    binding_adapter = _binding_class(profile)

    if not attribute:
        return binding_adapter(module, name=module_name, version=str(getattr(module, "__version__", "")))
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
        made = port_call(target_object, f"python:{target}: calling {attribute}()", "fix that function")
        if isinstance(made, Adapter):
            return made
        return binding_adapter(made, name=f"{module_name}:{attribute}")
    return binding_adapter(target_object, name=f"{module_name}:{attribute}")


def import_target(module_name: str) -> ModuleType:
    """Import a ``python:`` module; any failure becomes one line naming the module, the error and the fix."""
    try:
        imported = port_call(
            lambda: importlib.import_module(module_name), f"python:{module_name}: importing it", "fix that module", ModuleNotFoundError
        )
        return imported  # type: ignore[no-any-return]
    except ModuleNotFoundError as error:
        if error.name == module_name or module_name.startswith(f"{error.name}."):
            fix = "check the name, and run from the folder that holds it or add that folder to PYTHONPATH"
        else:
            fix = f"{module_name!r} imports {error.name!r}, which is not installed here: install it into this environment"
        raise ImplSpecError(f"python:{module_name}: cannot import it: {error}; {fix}") from None


def port_call(call: Callable[[], Any], doing: str, fix: str, passing: type[Exception] | None = None) -> Any:
    """``call()``, the port's own code run while it is started; whatever it raises becomes one :class:`ImplSpecError` line.

    ``SystemExit(3)``, a ``KeyboardInterrupt`` the port raised itself and ``GeneratorExit`` included, so
    that a start the port ends reads as that port's failure, never as the runner stopping without a
    word (the user's own Ctrl-C still stops it: :mod:`conformance.common.user_interrupts`). An
    exception of type ``passing`` passes through (:func:`import_target` says which module is missing).
    """
    with watching_interrupts() as watch:
        try:
            return call()
        except BaseException as error:
            if (passing is not None and isinstance(error, passing)) or watch.users(error):
                raise  # the caller's to word, or the user's Ctrl-C
            said = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            raise ImplSpecError(f"{doing} raised {said}{_where(error)}; {fix}") from None


def _where(error: BaseException) -> str:
    """`` (at FILE:LINE)``: where the innermost frame of ``error``'s traceback was, or ``""``."""
    trace = error.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    return "" if trace is None else f" (at {trace.tb_frame.f_code.co_filename}:{trace.tb_lineno})"
