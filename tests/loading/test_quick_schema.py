"""The quick schema check answers as jsonschema does: on every fixture, and on mutated copies of them.

The loader trusts a "valid" from :mod:`conformance.loading.quick_schema` and skips jsonschema:
a quick check more lenient than jsonschema would let a broken file through lint, so each
mutation below (a key removed, a value of another type, a key added) must get jsonschema's answer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.loading import quick_schema, shared_files
from conformance.loading.loader import fixture_files
from conformance.model.paths import fixtures_dir
from conformance.model.profiles import PROFILES, get_profile
from conformance.model.schemas import validator
from conformance.yamlio import safe as yamlsafe
from tests.support.requirements import costly


def _views() -> Iterator[tuple[str, str, Any]]:
    """(label, schema file, data) for every fixture file as each of its loads validates it."""
    for path in fixture_files(fixtures_dir()):
        data = yamlsafe.load(path.read_text(encoding="utf-8"))
        label = path.relative_to(fixtures_dir()).as_posix()
        if shared_files.is_shared(data):
            assert isinstance(data, dict)
            yield label, shared_files.SCHEMA, data
            for name in shared_files.profiles_of(data):
                profile = get_profile(name)
                yield f"{label} as {name}", profile.fixture_schema, shared_files.view_of(data, profile).data
        else:
            stated = data.get("profile", "course") if isinstance(data, dict) else "course"
            yield label, PROFILES[str(stated)].fixture_schema, data


def _jsonschema_valid(schema: str, data: object, pointer: str = "") -> bool:
    return next(iter(validator(schema, pointer).iter_errors(data)), None) is None


@pytest.mark.parametrize(("label", "schema", "data"), list(_views()), ids=lambda value: value if isinstance(value, str) else "")
def test_every_fixture_is_valid_both_ways(label: str, schema: str, data: object) -> None:
    assert quick_schema.is_valid(schema, data) is True, label
    assert _jsonschema_valid(schema, data), label


def _paths(value: object, where: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield where
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*where, index))


_REPLACEMENTS: tuple[tuple[str, object], ...] = (
    ("delete", None),
    ("number", 7),
    ("float", 1.5),
    ("true", True),
    ("text", "x"),
    ("list", []),
    ("null", None),
)
#: Paths mutated per file, spread evenly over it (jsonschema takes up to 20 ms per answer).
_PATHS_PER_FILE = 40


def _mutations(data: object) -> Iterator[tuple[str, object]]:
    """Copies of ``data`` each with one mistake: a key gone, a value of another type, an extra key."""
    paths = list(_paths(data))[1:]
    for where in paths[:: max(1, len(paths) // _PATHS_PER_FILE)]:
        for kind, replacement in _REPLACEMENTS:
            mutated = copy.deepcopy(data)
            parent: Any = mutated
            for part in where[:-1]:
                parent = parent[part]
            if kind == "delete":
                if not isinstance(parent, dict):
                    continue
                del parent[where[-1]]
            else:
                parent[where[-1]] = replacement
            yield f"{kind} at {list(where)}", mutated
        target: Any = copy.deepcopy(data)
        mutated = target
        for part in where:
            target = target[part]
        if isinstance(target, dict):
            target["unexpectedKey"] = 1
            yield f"extra key at {list(where)}", mutated


def _small_cases() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """One file per schema, cut to its first two cases so that jsonschema answers quickly."""
    seen: set[str] = set()
    for label, schema, data in _views():
        if schema not in seen and isinstance(data, dict):
            seen.add(schema)
            yield label, schema, {**data, "cases": data["cases"][:2]}


@costly
@pytest.mark.parametrize(("label", "schema", "data"), list(_small_cases()), ids=lambda value: value if isinstance(value, str) else "")
def test_each_mutation_gets_jsonschema_answer(label: str, schema: str, data: dict[str, Any]) -> None:
    answers = [(what, quick_schema.is_valid(schema, mutated), _jsonschema_valid(schema, mutated)) for what, mutated in _mutations(data)]
    disagreements = [f"{what}: quick {quick} jsonschema {full}" for what, quick, full in answers if quick != full]
    invalid = sum(1 for _, quick, _ in answers if not quick)
    assert not disagreements, disagreements[:5]
    assert invalid > 20, "the mutations should break the file in many places"


@pytest.mark.parametrize(
    ("definition", "value"),
    [
        ("ModelEvent", {"type": "start"}),
        ("ModelEvent", {"type": "text_delta", "delta": 1}),
        ("TextContent", {"type": "text", "text": "hi"}),
        ("TextContent", {"type": "text", "text": True}),
        ("Usage", {"input": 1.0, "output": 2, "totalTokens": 3}),
        ("Usage", {"input": True}),
    ],
)
def test_a_pointer_into_a_schema_answers_as_jsonschema(definition: str, value: object) -> None:
    pointer = f"/$defs/{definition}"
    assert quick_schema.is_valid("ir.schema.json", value, pointer) == _jsonschema_valid("ir.schema.json", value, pointer)


def test_equality_is_jsonschema_equality() -> None:
    assert quick_schema.equal(1, 1.0)
    assert not quick_schema.equal(True, 1)
    assert not quick_schema.equal([0], [False])
    assert quick_schema.equal({"a": [1, "x"]}, {"a": [1.0, "x"]})
    assert not quick_schema.equal("1", 1)


def test_a_keyword_it_does_not_know_leaves_the_answer_to_jsonschema(tmp_path: Path) -> None:
    schema = {"$id": "https://pi-conformance.dev/schemas/odd.schema.json", "type": "object", "dependentRequired": {"a": ["b"]}}
    (tmp_path / "odd.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    assert quick_schema._compiled("odd.schema.json", "", tmp_path) is None


def test_a_recursive_schema_compiles_and_checks(tmp_path: Path) -> None:
    tree = {
        "$id": "https://pi-conformance.dev/schemas/tree.schema.json",
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
        "additionalProperties": False,
    }
    (tmp_path / "tree.schema.json").write_text(json.dumps(tree), encoding="utf-8")
    check = quick_schema._compiled("tree.schema.json", "", tmp_path)
    assert check is not None
    assert check({"children": [{"children": []}, {}]})
    assert not check({"children": [{"children": [{"leaf": 1}]}]})
