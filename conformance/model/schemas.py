"""Load the project's JSON Schemas and build validators that resolve their cross-references."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from conformance.common.jsontypes import JsonObject
from conformance.model.paths import schemas_dir

SCHEMA_BASE = "https://pi-conformance.dev/schemas/"


@cache
def _load_all(folder: Path) -> tuple[Registry, dict[str, JsonObject]]:
    registry: Registry = Registry()
    by_name: dict[str, JsonObject] = {}
    for path in sorted(folder.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        by_name[path.name] = schema
        registry = registry.with_resource(schema.get("$id", SCHEMA_BASE + path.name), Resource.from_contents(schema))
    return registry, by_name


def validator(name: str, pointer: str = "", folder: Path | None = None) -> Draft202012Validator:
    """A validator for schema file ``name``, or for the sub-schema at JSON pointer ``pointer`` in it (built once, shared)."""
    return _validator(name, pointer, folder or schemas_dir())


@cache
def _validator(name: str, pointer: str, folder: Path) -> Draft202012Validator:
    registry, by_name = _load_all(folder)
    schema = by_name[name]
    if pointer:
        schema = {"$ref": f"{schema.get('$id', SCHEMA_BASE + name)}#{pointer}"}
    return Draft202012Validator(schema, registry=registry)


def load_schema(name: str, folder: Path | None = None) -> JsonObject:
    """The parsed schema file ``name`` (shared; do not modify)."""
    return _load_all(folder or schemas_dir())[1][name]
