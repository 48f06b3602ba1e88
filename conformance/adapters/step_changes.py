"""A step's change to a value the port holds: ``append`` or ``set`` at a JSON pointer, in place.

Scenarios change the caller's context after a call (``mutate_context``) or a result the caller
received (``mutate_result``) to check that the port kept its own copies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.adapters import json_pointer
from conformance.adapters.interface import HarnessError
from conformance.common.jsontypes import JsonObject, JsonValue


def mutate_context(context: Any, step: JsonObject, convert: Callable[[JsonValue], Any]) -> None:
    """A ``mutate_context`` step: the caller changes the context it passed; a change that cannot apply is the fixture's mistake."""
    try:
        apply_change(context, step, convert)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as error:
        raise HarnessError(f"mutate_context cannot apply {step}: {error}") from error


def apply_change(target: Any, step: JsonObject, convert: Callable[[JsonValue], Any]) -> None:
    """Apply a step's ``append`` or ``set`` (``{path, value}``) to ``target`` in place; ``convert`` makes the port's value."""
    if "append" in step:
        change = step["append"]
        assert isinstance(change, dict)
        json_pointer.append_value(target, str(change["path"]), convert(change["value"]))
    else:
        change = step["set"]
        assert isinstance(change, dict)
        json_pointer.set_value(target, str(change["path"]), convert(change["value"]))


def change_path(step: JsonObject) -> str:
    """The path a step's ``append`` or ``set`` names, for a message that it could not be applied."""
    change = step.get("append", step.get("set"))
    return str(change.get("path")) if isinstance(change, dict) else "path"
