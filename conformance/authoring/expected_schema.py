"""``spec/schemas/*expected-ir.schema.json``: each IR's shapes as expected values, for editors and the loader.

An expected event, message or request is an IR value in which a matcher (``{$type: ...}``,
``{$oneOf: [...]}``, ``{$any: true}``) may stand for any part. This module derives those
shapes from an IR schema (same names, every part "a matcher, or else the IR's shape"), so
that editors complete the keys of an expected event and flag ``content_index`` or a
misspelt ``role`` in an expected request, as the loader does: ``expected-ir.schema.json``
from the course's ``ir.schema.json``, ``pi-ai-1-expected-ir.schema.json`` from upstream's
types (``pi-ai-1-ir.schema.json``).

Regenerate after editing an IR schema: ``python -m conformance.authoring.expected_schema``
(a test fails while a file is stale).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from conformance.common.jsontypes import JsonObject
from conformance.model.paths import schemas_dir
from conformance.model.schemas import SCHEMA_BASE, load_schema

NAME = "expected-ir.schema.json"
#: Each generated file and the IR schema it is generated from.
SOURCES: dict[str, str] = {NAME: "ir.schema.json", "pi-ai-1-expected-ir.schema.json": "pi-ai-1-ir.schema.json"}
_MATCHER = {"$ref": "fixture-file.schema.json#/$defs/Matcher"}
# What makes an object a matcher; a definition of its own (IR names are CamelCase, this is not).
_IS_MATCHER_NAME = "is_matcher"
_IS_MATCHER: JsonObject = {"type": "object", "anyOf": [{"required": ["$type"]}, {"required": ["$oneOf"]}, {"required": ["$any"]}]}


def generate(ir: JsonObject, name: str = NAME) -> JsonObject:
    """The expected-value schema ``name`` of every definition of the IR schema ``ir``."""
    definitions = ir.get("$defs")
    assert isinstance(definitions, dict)
    source = SOURCES.get(name, "ir.schema.json")
    own = _Refs(name, source)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_BASE + name,
        "title": f"pi-conformance expected values of {ir.get('title', source)}",
        "description": (
            f"Generated from {source} by `python -m conformance.authoring.expected_schema`; do not edit. "
            "Each definition is its IR shape in which a matcher (fixture-file.schema.json#/$defs/Matcher) may stand for any part."
        ),
        "$defs": {_IS_MATCHER_NAME: _IS_MATCHER, **{key: own.expected(schema) for key, schema in definitions.items()}},
    }


class _Refs:
    """Rewrites an IR schema's parts as expected values; its references name the generated file."""

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self.source = source

    def expected(self, schema: Any) -> Any:
        """A matcher, or else ``schema`` with every part expected in turn."""
        if not isinstance(schema, dict):
            return schema
        return {"if": {"$ref": f"{self.name}#/$defs/{_IS_MATCHER_NAME}"}, "then": _MATCHER, "else": self.shape(schema)}

    def shape(self, schema: dict[str, Any]) -> dict[str, Any]:
        shaped: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                shaped[key] = {name: self.expected(item) for name, item in value.items()}
            elif key == "items":
                shaped[key] = self.expected(value)
            elif key in ("oneOf", "anyOf", "allOf") and isinstance(value, list):
                shaped[key] = [self.shape(item) if isinstance(item, dict) else item for item in value]
            elif key in ("then", "else") and isinstance(value, dict):
                shaped[key] = self.shape(value)
            elif key == "$ref" and isinstance(value, str):
                shaped[key] = self.ref(value)
            else:  # type, const, enum, required, if (a discriminator's test), ...
                shaped[key] = value
        return shaped

    def ref(self, ref: str) -> str:
        """``#/$defs/X`` (or the IR file's X) names the expected X of the generated file, by its file name.

        A named file lets a reader of one definition (conformance.loading.schema_errors) find the others
        without knowing which file it came from.
        """
        target, _, pointer = ref.partition("#")
        return f"{self.name}#{pointer}" if target in ("", self.source) else ref


def text(name: str = NAME) -> str:
    """The content of the generated file ``name``, as committed."""
    return json.dumps(generate(load_schema(SOURCES[name]), name), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    """Rewrite every generated file from its IR schema."""
    for name in SOURCES:
        (schemas_dir() / name).write_text(text(name), encoding="utf-8")
        print(f"wrote {schemas_dir() / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
