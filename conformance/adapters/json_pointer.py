"""Just enough JSON Pointer (RFC 6901) to apply the fixtures' ``mutate_context`` steps.

Besides dicts and lists, a step may go through a port's own objects: a part names an
attribute, as spelt in the IR (``stopReason``) or in snake case (``stop_reason``).
"""

from __future__ import annotations

import re
from typing import Any


def attribute_name(container: Any, part: str) -> str:
    """The attribute of ``container`` that the pointer part ``part`` names (IR spelling, else snake case)."""
    if hasattr(container, part):
        return part
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", part).lower()
    if hasattr(container, snake):
        return snake
    raise KeyError(part)


def _parts(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"JSON pointer {pointer!r} must start with '/'")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def _step(container: Any, part: str) -> Any:
    if isinstance(container, list):
        return container[int(part)]
    if isinstance(container, dict):
        return container[part]
    return getattr(container, attribute_name(container, part))


def resolve(document: Any, pointer: str) -> Any:
    """The value at ``pointer`` inside ``document``."""
    for part in _parts(pointer):
        document = _step(document, part)
    return document


def set_value(document: Any, pointer: str, value: Any) -> None:
    """Replace the value at ``pointer`` (in place) with ``value``."""
    parts = _parts(pointer)
    if not parts:
        raise ValueError("cannot replace the whole document")
    parent = document
    for part in parts[:-1]:
        parent = _step(parent, part)
    if isinstance(parent, list):
        parent[int(parts[-1])] = value
    elif isinstance(parent, dict):
        parent[parts[-1]] = value
    else:
        setattr(parent, attribute_name(parent, parts[-1]), value)


def append_value(document: Any, pointer: str, value: Any) -> None:
    """Append ``value`` to the array at ``pointer`` (in place)."""
    target = resolve(document, pointer)
    if not isinstance(target, list):
        raise ValueError(f"{pointer!r} is not an array")
    target.append(value)
