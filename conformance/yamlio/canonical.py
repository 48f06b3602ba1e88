"""Canonical JSON of fixture data: one byte string per value, whatever the YAML looked like.

Used for content hashes (``fixtures export``) and for spotting cases with identical inputs
(``fixtures lint``). Keys are sorted and there is no whitespace, so quoting, flow or block
style, key order and anchors in the YAML never change the result; any change of a value does.
"""

from __future__ import annotations

import hashlib
import json

from conformance.common.jsontypes import JsonObject, JsonValue

DESCRIPTION = "JSON with keys sorted, separators ',' and ':', no whitespace, non-ASCII unescaped, UTF-8"


def dumps(value: JsonValue) -> str:
    """The canonical JSON text of ``value``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256(value: JsonValue) -> str:
    """Hex SHA-256 of the canonical JSON of ``value`` (UTF-8)."""
    return hashlib.sha256(dumps(value).encode("utf-8")).hexdigest()


def same(left: JsonValue, right: JsonValue) -> bool:
    """Strict equality: unlike ``==``, ``true`` differs from ``1`` and ``1`` from ``1.0``."""
    return dumps(left) == dumps(right)


def inputs_key(operation: str, input_value: JsonValue, steps: list[JsonValue] | tuple[JsonValue, ...]) -> str:
    """What a case feeds the implementation: operation, input and steps without their ``expect``."""
    bare_steps: list[JsonValue] = [
        {key: item for key, item in step.items() if key != "expect"} if isinstance(step, dict) else step for step in steps
    ]
    key: JsonObject = {"operation": operation, "input": input_value, "steps": bare_steps}
    return dumps(key)
