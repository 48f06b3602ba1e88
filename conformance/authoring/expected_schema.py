"""``spec/schemas/expected-ir.schema.json``: the IR's shapes as expected values, for editors and the loader.

An expected event, message or request is an IR value in which a matcher (``{$type: ...}``,
``{$oneOf: [...]}``, ``{$any: true}``) may stand for any part. This module derives those
shapes from ``ir.schema.json`` (same names, every part "a matcher, or else the IR's shape"),
so that editors complete the keys of an expected event and flag ``content_index`` or a
misspelt ``role`` in an expected request, as the loader does.

Regenerate after editing ``ir.schema.json``: ``python -m conformance.authoring.expected_schema``
(a test fails while the file is stale).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from conformance.common.jsontypes import JsonObject
from conformance.spec.paths import schemas_dir
from conformance.spec.schemas import SCHEMA_BASE, load_schema

NAME = "expected-ir.schema.json"
_MATCHER = {"$ref": "fixture-file.schema.json#/$defs/Matcher"}
# What makes an object a matcher; a definition of its own (IR names are CamelCase, this is not).
_IS_MATCHER_NAME = "is_matcher"
_IS_MATCHER: JsonObject = {"type": "object", "anyOf": [{"required": ["$type"]}, {"required": ["$oneOf"]}, {"required": ["$any"]}]}


def generate(ir: JsonObject) -> JsonObject:
    """The expected-value schema of every definition of the IR schema ``ir``."""
    definitions = ir.get("$defs")
    assert isinstance(definitions, dict)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_BASE + NAME,
        "title": "pi-conformance expected IR values",
        "description": (
            "Generated from ir.schema.json by `python -m conformance.authoring.expected_schema`; do not edit. "
            "Each definition is its IR shape in which a matcher (fixture-file.schema.json#/$defs/Matcher) may stand for any part."
        ),
        "$defs": {_IS_MATCHER_NAME: _IS_MATCHER, **{name: _expected(schema) for name, schema in definitions.items()}},
    }


def _expected(schema: Any) -> Any:
    """A matcher, or else ``schema`` with every part expected in turn."""
    if not isinstance(schema, dict):
        return schema
    return {"if": {"$ref": f"#/$defs/{_IS_MATCHER_NAME}"}, "then": _MATCHER, "else": _shape(schema)}


def _shape(schema: dict[str, Any]) -> dict[str, Any]:
    shaped: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            shaped[key] = {name: _expected(item) for name, item in value.items()}
        elif key == "items":
            shaped[key] = _expected(value)
        elif key in ("oneOf", "anyOf", "allOf") and isinstance(value, list):
            shaped[key] = [_shape(item) if isinstance(item, dict) else item for item in value]
        else:  # $ref (#/$defs/X names the expected X here), type, const, enum, required, ...
            shaped[key] = value
    return shaped


def text() -> str:
    """The file's content, as committed."""
    return json.dumps(generate(load_schema("ir.schema.json")), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    """Rewrite the file from ir.schema.json."""
    (schemas_dir() / NAME).write_text(text(), encoding="utf-8")
    print(f"wrote {schemas_dir() / NAME}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
