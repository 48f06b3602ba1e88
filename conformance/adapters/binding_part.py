"""The helpers every chapter's operations of the in-process binding use, declared once.

Each chapter's operations are a class of their own (:mod:`.tool_binding`, :mod:`.agent_state_binding`);
:class:`~conformance.adapters.binding.BindingAdapter` inherits them all and supplies these helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.adapters.interface import Adapter
from conformance.common.jsontypes import JsonValue


class BindingPart(Adapter):
    """A chapter's operations: what they need of the binding adapter, supplied by :class:`BindingAdapter`."""

    name: str = "python"

    def _api(self, name: str) -> Callable[..., Any]:
        """The binding's function ``name``; OperationNotSupported when it has none."""
        raise NotImplementedError  # supplied by BindingAdapter

    def _call_method(self, target: Any, owner: str, name: str, *args: Any) -> Any:
        """Call ``target.name(*args)``, a method of an object the port returned."""
        raise NotImplementedError  # supplied by BindingAdapter

    def to_impl(self, value: JsonValue) -> Any:
        """The port's own object for a JSON input value."""
        raise NotImplementedError  # supplied by BindingAdapter

    def to_json(self, value: Any, what: str) -> JsonValue:
        """A detached JSON copy of what the port produced."""
        raise NotImplementedError  # supplied by BindingAdapter

    def _fingerprint(self, value: Any) -> str:
        """What a port's object looks like now, to tell whether it changed."""
        raise NotImplementedError  # supplied by BindingAdapter
