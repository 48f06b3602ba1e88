"""A quick yes or no: is this data valid against one of the project's JSON Schemas?

Almost every fixture file is valid, and jsonschema spends most of ``fixtures lint``'s time
proving it (a new validator per ``$ref`` and per branch, for thousands of values). This module
compiles each schema once into plain Python checks that answer only "valid or not". The
loader asks it first; only data it calls invalid goes to jsonschema, whose errors are the
messages authors read. So the answers stay jsonschema's: a valid file has no errors either
way, an invalid one gets jsonschema's.

It knows the keywords the project's schemas use (draft 2020-12). A schema with any other
keyword raises :class:`Unsupported` when compiled and the caller falls back to jsonschema, so
a new keyword in a schema can never make invalid data pass. ``tests/loading`` compares its
answers with jsonschema's on every fixture and on mutated copies of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urldefrag, urljoin

from conformance.model.paths import schemas_dir

if TYPE_CHECKING:  # jsonschema is imported only for data the quick check calls invalid
    from jsonschema.exceptions import ValidationError

#: Where a schema without ``$id`` lives (as conformance.model.schemas has it).
SCHEMA_BASE = "https://pi-conformance.dev/schemas/"

Check = Callable[[Any], bool]
#: Keywords that never decide validity (annotations, and the definitions a ``$ref`` reaches).
_ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples", "deprecated"})


class Unsupported(Exception):
    """The schema uses a keyword this module does not check: ask jsonschema instead."""


def errors(name: str, data: object, pointer: str = "") -> Iterator[ValidationError]:
    """jsonschema's errors for ``data`` against schema file ``name`` (at ``pointer``): none at once when it is valid."""
    if is_valid(name, data, pointer):
        return iter(())
    from conformance.model.schemas import validator

    return validator(name, pointer).iter_errors(data)


def is_valid(name: str, data: object, pointer: str = "") -> bool | None:
    """Whether ``data`` is valid against schema file ``name`` (at JSON pointer ``pointer``); None when this module cannot tell."""
    check = _compiled(name, pointer, schemas_dir())
    return None if check is None else check(data)


@cache
def _compiled(name: str, pointer: str, folder: Path) -> Check | None:
    compiler = _Compiler(folder)
    try:
        return compiler.ref(f"{compiler.uri_of(name)}#{pointer}")
    except Unsupported:
        return None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "number": _is_number,
    # As jsonschema: 1.0 is an integer, True is not.
    "integer": lambda value: _is_number(value) and (isinstance(value, int) or value.is_integer()),
}


def equal(one: object, two: object) -> bool:
    """JSON equality as jsonschema has it: a boolean never equals a number, 1 equals 1.0."""
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(equal(one[key], two[key]) for key in one)
    if isinstance(one, list | dict) or isinstance(two, list | dict):
        return False
    return one == two


class _Compiler:
    """Compiles schemas into checks; a ``$ref`` is compiled once per target, recursion included."""

    def __init__(self, folder: Path) -> None:
        self.documents: dict[str, Any] = {}
        for path in sorted(folder.glob("*.schema.json")):
            schema = json.loads(path.read_text(encoding="utf-8"))
            self.documents[str(schema.get("$id", SCHEMA_BASE + path.name))] = schema
        self.refs: dict[str, Check] = {}

    def uri_of(self, name: str) -> str:
        return next((uri for uri in self.documents if uri.rsplit("/", 1)[-1] == name), SCHEMA_BASE + name)

    def ref(self, uri: str) -> Check:
        """The check of the schema at absolute ``uri`` (``document#pointer``)."""
        if uri in self.refs:
            return self.refs[uri]
        # A recursive schema reaches itself while compiling: it calls the cell, filled below.
        cell: list[Check] = []
        self.refs[uri] = lambda value: cell[0](value)
        document, fragment = urldefrag(uri)
        if document not in self.documents:
            raise Unsupported(f"unknown schema {document}")
        cell.append(self.compile(_resolve(self.documents[document], fragment), document))
        self.refs[uri] = cell[0]
        return cell[0]

    def compile(self, schema: object, base: str) -> Check:
        """The check of ``schema``, whose ``$ref``s are relative to ``base``."""
        if schema is True:
            return lambda value: True
        if schema is False:
            return lambda value: False
        if not isinstance(schema, dict):
            raise Unsupported(f"not a schema: {schema!r}")
        checks = [self.keyword(keyword, argument, schema, base) for keyword, argument in schema.items() if keyword not in _ANNOTATIONS]
        if "$id" in schema and urljoin(base, schema["$id"]) != base:
            raise Unsupported("a nested $id")
        return _all_of([check for check in checks if check is not None])

    def keyword(self, keyword: str, argument: Any, schema: Mapping[str, Any], base: str) -> Check | None:
        if keyword == "$ref":
            return self.ref(urljoin(base, argument))
        if keyword in _APPLICATORS:
            return _APPLICATORS[keyword](self, argument, schema, base)
        if keyword in _ASSERTIONS:
            return _ASSERTIONS[keyword](argument)
        if keyword in {"then", "else"}:  # compiled with their `if`
            return None
        raise Unsupported(f"keyword {keyword}")


def _resolve(document: Any, fragment: str) -> Any:
    """The sub-schema a JSON pointer fragment names."""
    node = document
    for part in [unquote(piece).replace("~1", "/").replace("~0", "~") for piece in fragment.split("/")[1:]] if fragment else []:
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise Unsupported(f"no {fragment} in the schema")
    return node


def _all_of(checks: list[Check]) -> Check:
    if not checks:
        return lambda value: True
    if len(checks) == 1:
        return checks[0]

    def every(value: Any) -> bool:
        for check in checks:
            if not check(value):
                return False
        return True

    return every


def _only(kind: str, check: Check) -> Check:
    """A keyword that concerns one JSON type: values of any other type pass it."""
    is_kind = _TYPES[kind]
    return lambda value: not is_kind(value) or check(value)


def _type(argument: Any) -> Check:
    names = argument if isinstance(argument, list) else [argument]
    checks = [_TYPES[name] for name in names]
    return lambda value: any(check(value) for check in checks)


def _enum(argument: Any) -> Check:
    return lambda value: any(equal(value, option) for option in argument)


def _unique(argument: Any) -> Check:
    def unique(items: list[Any]) -> bool:
        return all(not equal(items[i], items[j]) for i in range(len(items)) for j in range(i + 1, len(items)))

    return _only("array", unique) if argument else (lambda value: True)


def _pattern(argument: Any) -> Check:
    compiled = re.compile(argument)
    return _only("string", lambda value: compiled.search(value) is not None)


_ASSERTIONS: dict[str, Callable[[Any], Check]] = {
    "type": _type,
    "const": lambda argument: lambda value: equal(value, argument),
    "enum": _enum,
    "required": lambda argument: _only("object", lambda value: all(key in value for key in argument)),
    "minProperties": lambda argument: _only("object", lambda value: len(value) >= argument),
    "maxProperties": lambda argument: _only("object", lambda value: len(value) <= argument),
    "minItems": lambda argument: _only("array", lambda value: len(value) >= argument),
    "uniqueItems": _unique,
    "minLength": lambda argument: _only("string", lambda value: len(value) >= argument),
    "pattern": _pattern,
    "minimum": lambda argument: lambda value: not _is_number(value) or value >= argument,
    "maximum": lambda argument: lambda value: not _is_number(value) or value <= argument,
    "exclusiveMinimum": lambda argument: lambda value: not _is_number(value) or value > argument,
}


def _properties(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    checks = {key: compiler.compile(sub, base) for key, sub in argument.items()}

    def properties(value: dict[str, Any]) -> bool:
        for key, item in value.items():
            check = checks.get(key)
            if check is not None and not check(item):
                return False
        return True

    return _only("object", properties)


def _additional(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    if "patternProperties" in schema:
        raise Unsupported("patternProperties")
    known = set(schema.get("properties", {}))
    check = compiler.compile(argument, base)
    return _only("object", lambda value: all(check(item) for key, item in value.items() if key not in known))


def _items(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    if "prefixItems" in schema:
        raise Unsupported("prefixItems")
    check = compiler.compile(argument, base)
    return _only("array", lambda value: all(check(item) for item in value))


def _property_names(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    check = compiler.compile(argument, base)
    return _only("object", lambda value: all(check(key) for key in value))


def _dependent(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    checks = [(key, compiler.compile(sub, base)) for key, sub in argument.items()]
    return _only("object", lambda value: all(check(value) for key, check in checks if key in value))


def _if(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    condition = compiler.compile(argument, base)
    then = compiler.compile(schema.get("then", True), base)
    otherwise = compiler.compile(schema.get("else", True), base)
    return lambda value: then(value) if condition(value) else otherwise(value)


def _all(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    return _all_of([compiler.compile(sub, base) for sub in argument])


def _any(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    checks = [compiler.compile(sub, base) for sub in argument]
    return lambda value: any(check(value) for check in checks)


def _one(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    checks = [compiler.compile(sub, base) for sub in argument]
    return lambda value: sum(1 for check in checks if check(value)) == 1


def _not(compiler: _Compiler, argument: Any, schema: Mapping[str, Any], base: str) -> Check:
    check = compiler.compile(argument, base)
    return lambda value: not check(value)


_APPLICATORS: dict[str, Callable[[_Compiler, Any, Mapping[str, Any], str], Check]] = {
    "properties": _properties,
    "additionalProperties": _additional,
    "items": _items,
    "propertyNames": _property_names,
    "dependentSchemas": _dependent,
    "if": _if,
    "allOf": _all,
    "anyOf": _any,
    "oneOf": _one,
    "not": _not,
}
