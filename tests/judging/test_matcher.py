"""The matcher finds the first divergence and names it by path."""

from __future__ import annotations

import json

import pytest

from conformance.common.jsontypes import JsonValue
from conformance.judging.matcher import MISSING, escape_keys, first_divergence
from conformance.judging.outcome import Divergence


def message(expected: JsonValue, actual: JsonValue, path: str = "") -> str | None:
    divergence = first_divergence(expected, actual, path)
    return None if divergence is None else str(divergence)


def test_equal_values_match() -> None:
    value: JsonValue = {"a": [1, {"b": "é"}], "c": None, "d": True}
    assert message(value, value) is None


def test_issue_example_path_and_rendering() -> None:
    expected: list[JsonValue] = [{"partial": {"content": [{}, {"arguments": {}}]}}] * 3
    actual: JsonValue = [*expected[:2], {"partial": {"content": [{}, {"arguments": {"path": "README.md"}}]}}]
    assert message(expected, actual, "events") == (
        'events[2].partial.content[1].arguments: expected {} but got {"path": "README.md"} (unexpected key "path": "README.md")'
    )


def test_first_divergence_is_depth_first_in_document_order() -> None:
    expected: JsonValue = {"a": {"x": 1, "y": 2}, "b": 3}
    actual: JsonValue = {"a": {"x": 1, "y": 20}, "b": 30}
    assert message(expected, actual) == "a.y: expected 2 but got 20"


def test_missing_key_is_reported() -> None:
    assert message({"a": 1, "b": 2}, {"a": 1}) == "b: expected 2 but got nothing (the key is missing)"


def test_missing_value_at_root_of_step_key() -> None:
    divergence = first_divergence([1], MISSING, "steps[0].events")
    assert divergence is not None and "missing" in str(divergence)


def test_shorter_and_longer_arrays() -> None:
    assert message([1, 2, 3], [1, 2], "a") == "a: expected 3 items but got 2 items (first missing item, [2]: 3)"
    assert message([], [{"type": "done"}], "a") == 'a: expected 0 items but got 1 item (first extra item, [0]: {"type": "done"})'


def test_non_identifier_keys_are_bracketed() -> None:
    assert message({"a b": 1}, {"a b": 2}) == '["a b"]: expected 1 but got 2'


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (0, False, False),
        (None, 0, False),
        ("1", 1, False),
        ([], {}, False),
        # Numbers are doubles: JavaScript prints 1.2345678901234568e20 as 123456789012345680000,
        # which Python parses as an int whose exact value is not the double's.
        (1.2345678901234568e20, 123456789012345680000, True),
        (2**53, 2**53 + 1, True),
        (2**53, 2**53 + 2, False),
        (10**400, 10**400 + 1, False),
    ],
)
def test_scalars_follow_json_equality(expected: JsonValue, actual: JsonValue, matches: bool) -> None:
    assert (message(expected, actual) is None) is matches


@pytest.mark.parametrize(
    ("type_name", "good", "bad"),
    [
        ("string", "x", 1),
        ("number", 1.5, "1"),
        ("integer", 3, 3.5),
        ("boolean", False, 0),
        ("object", {}, []),
        ("array", [], {}),
        ("null", None, 0),
    ],
)
def test_type_matcher(type_name: str, good: JsonValue, bad: JsonValue) -> None:
    assert message({"$type": type_name}, good) is None
    assert message({"$type": type_name}, bad) == f"(root): expected any {type_name} but got {__import__('json').dumps(bad)}"


def test_type_matcher_rejects_missing_key() -> None:
    assert message({"t": {"$type": "number"}}, {}) == "t: expected any number but got nothing (the key is missing)"


def test_any_matcher_accepts_everything_present() -> None:
    assert message({"x": {"$any": True}}, {"x": [1]}) is None
    assert message({"x": {"$any": True}}, {}) is not None


def test_one_of_matcher_names_the_nearest_alternative() -> None:
    expected: JsonValue = {
        "$oneOf": [[{"type": "start"}, {"type": "error"}], [{"type": "start"}, {"type": "text_delta"}, {"type": "error"}]]
    }
    assert message(expected, [{"type": "start"}, {"type": "error"}]) is None
    text = message(expected, [{"type": "start"}, {"type": "done"}], "events")
    assert text is not None
    assert text.startswith("events: expected one of")
    assert 'nearest differs at events[1].type: expected "error" but got "done"' in text


def test_long_values_are_cut() -> None:
    text = message("x", "y" * 1000)
    assert text is not None and len(text) < 300 and text.endswith("…")


def test_a_divergence_says_its_kind_and_an_unexpected_key() -> None:
    from conformance.judging.matcher import first_divergence

    unexpected = first_divergence({"a": 1}, {"a": 1, "sections": {}})
    assert unexpected is not None and (unexpected.path, unexpected.kind, unexpected.key) == ("", "unexpected", "sections")
    missing = first_divergence({"a": 1, "b": 2}, {"a": 1})
    assert missing is not None and (missing.path, missing.kind) == ("b", "missing")
    retyped = first_divergence({"a": 1}, {"a": "1"})
    assert retyped is not None and retyped.kind == "type"
    matcher = first_divergence({"a": {"$type": "string"}}, {"a": 1})
    assert matcher is not None and matcher.kind == "type"
    other = first_divergence({"a": [1, 2]}, {"a": [1, 3]})
    assert other is not None and (other.path, other.kind) == ("a[1]", "value")


def test_a_divergence_survives_its_trip_through_json() -> None:
    found = first_divergence({"a": {}}, {"a": {"b c": 1}})
    assert found is not None and found.kind == "unexpected" and found.key == "b c"
    text = json.dumps(found.to_json())
    assert Divergence.from_json(json.loads(text)) == found
    assert set(found.to_json()) == {"path", "expected", "actual", "note", "kind", "key"}


@pytest.mark.parametrize(
    "data",
    [
        None,
        ["path", "expected", "actual"],
        {"path": "a", "expected": "1"},  # no actual
        {"path": "a", "expected": "1", "actual": 2},  # not a string
        {"path": "a", "expected": "1", "actual": "2", "kind": "worse"},
        {"path": "a", "expected": "1", "actual": "2", "points": "9"},  # a field no divergence has
    ],
)
def test_json_that_is_not_a_divergence_is_refused(data: object) -> None:
    with pytest.raises(ValueError):
        Divergence.from_json(data)


def test_a_double_dollar_key_is_the_literal_key_with_one_dollar_less() -> None:
    expected: JsonValue = {"arguments": {"$$ref": "#/a", "$$$x": 1, "n": {"$type": "number"}}}
    assert first_divergence(expected, {"arguments": {"$ref": "#/a", "$$x": 1, "n": 2}}) is None
    wrong = first_divergence(expected, {"arguments": {"$ref": "#/b", "$$x": 1, "n": 2}})
    assert wrong is not None and wrong.path == 'arguments["$ref"]'
    # The escaped spelling is no key of the actual value: "$$ref" itself is unexpected there.
    extra = first_divergence(expected, {"arguments": {"$ref": "#/a", "$$x": 1, "n": 2, "$$ref": "#/a"}})
    assert extra is not None and extra.kind == "unexpected" and extra.key == "$$ref"
    assert escape_keys({"$O": [{"$type": "x"}], "plain": "$O"}) == {"$$O": [{"$$type": "x"}], "plain": "$O"}
