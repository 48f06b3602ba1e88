"""Tool argument validation with coercion (spec/pi-agent-core-1/spec.md, PAC-TOOL-5; pi-ai 1.6.0 ``validateToolArguments``).

A small JSON Schema subset: ``type`` (``object``, ``string``, ``number``, ``integer``, ``boolean``,
``array``, ``null``), ``properties`` and ``required``. Before checking, a primitive where a string
is declared becomes its JavaScript text (``1`` is ``"1"``, ``null`` is ``"null"``), as pi-schema's
coercion does. The tool gets the coerced copy; the tool call keeps the model's arguments.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ._pi_ai import js_text

_CHECKS = {
    "object": lambda value: isinstance(value, dict),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "array": lambda value: isinstance(value, list),
    "null": lambda value: value is None,
}


def _type_name(value: Any) -> str:
    """pi-schema's name of a value's type, for ``expected T, got NAME``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _coerce(schema: Any, value: Any) -> Any:
    """``value`` converted towards ``schema`` where pi-schema would: primitives to strings, object members by property."""
    if not isinstance(schema, dict):
        return value
    if schema.get("type") == "string" and (value is None or isinstance(value, bool | int | float)):
        return js_text.stringify(value) if value is not None else "null"
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        return {key: _coerce(properties.get(key), item) for key, item in value.items()}
    return value


def _errors(schema: Any, value: Any, path: str) -> list[tuple[str, str]]:
    """(dotted path, message) per failure, ``root`` for the value itself."""
    if not isinstance(schema, dict):
        return []
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _CHECKS and not _CHECKS[kind](value):
        return [(path or "root", f"expected {kind}, got {_type_name(value)}")]
    found: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for name in schema.get("required") or []:
            if name not in value:
                found.append((f"{path}.{name}" if path else name, "missing"))
        for name, member in (schema.get("properties") or {}).items():
            if name in value:
                found.extend(_errors(member, value[name], f"{path}.{name}" if path else name))
    return found


def validate_tool_arguments(tool: Any, tool_call: dict[str, Any]) -> Any:
    """The coerced copy of the call's arguments; raises ``ValueError`` with upstream's text when they do not fit."""
    arguments = tool_call.get("arguments")
    coerced = _coerce(tool.parameters, copy.deepcopy(arguments))
    errors = _errors(tool.parameters, coerced, "")
    if not errors:
        return coerced
    lines = "\n".join(f"  - {path}: {message}" for path, message in errors)
    received = json.dumps(arguments, indent=2, ensure_ascii=False)
    raise ValueError(f'Validation failed for tool "{tool_call.get("name")}":\n{lines}\n\nReceived arguments:\n{received}')
