"""What both bindings share: upstream's camelCase names and the ports' snake_case ones, and the adapter."""

from __future__ import annotations

import re
import sys
from importlib.metadata import version
from typing import Any


def snake(name: str) -> str:
    """``toolCallId`` -> ``tool_call_id``."""
    return re.sub(r"(?<!^)([A-Z])", lambda match: "_" + match.group(1).lower(), name)


def camel(name: str) -> str:
    """``tool_call_id`` -> ``toolCallId``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def adapter_for(module_name: str, distribution: str) -> Any:
    """The binding module ``module_name`` played through ``PiAgentCoreBindingAdapter``, named and versioned as installed."""
    from conformance.adapters.pi_agent_core_binding import PiAgentCoreBindingAdapter

    return PiAgentCoreBindingAdapter(sys.modules[module_name], name=distribution, version=version(distribution))


def classify(value: dict[str, Any], port: str, roles: dict[str, Any]) -> tuple[str, Any]:
    """What a JSON object of upstream's is: ``("message", role)``, ``("event", type)``, ``("block", type)`` or ``("other", None)``.

    A role the port has no type for raises ``NotImplementedError``: the case is skipped, not failed.
    """
    if "role" in value:
        if value["role"] not in roles:
            raise NotImplementedError(f"{port} has no {value['role']} message type")
        return "message", value["role"]
    kind = value.get("type")
    if "partial" in value or (kind in ("done", "error") and ("message" in value or "error" in value)):
        return "event", kind
    return ("block", kind) if isinstance(kind, str) else ("other", None)


def each(value: Any, convert: Any) -> Any:
    """``convert`` applied through lists, tuples and dicts' values; anything else as it is."""
    if isinstance(value, list | tuple):
        return [convert(item) for item in value]
    if isinstance(value, dict):
        return {key: convert(item) for key, item in value.items()}
    return value
