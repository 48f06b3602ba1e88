"""Compare an expected JSON value (which may contain matchers) with an observed one.

The comparison stops at the *first divergence*, walking depth-first in document order, and
reports it with a path such as ``steps[2].events[1].partial.content[0].text``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Final, TypeAlias

from conformance.common.jsontypes import JsonValue
from conformance.common.value_paths import join_index, join_key
from conformance.judging.outcome import Divergence

MATCHER_KEYS: Final = frozenset({"$type", "$oneOf", "$any"})
_RENDER_LIMIT = 240
# An unexpected key's own value, in the note: the parent's rendering may be cut before it.
_KEY_VALUE_LIMIT = 120


class _Missing:
    """Marks a key that the observation does not have."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = _Missing()
#: What an observation holds at a path: a JSON value, or :data:`MISSING`.
Observed: TypeAlias = "JsonValue | _Missing"


def render(value: JsonValue | _Missing, limit: int = _RENDER_LIMIT) -> str:
    """Render a value as compact, readable JSON (non-ASCII kept), cut at ``limit`` chars."""
    if isinstance(value, _Missing):
        return "nothing (the key is missing)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_expected(value: JsonValue | _Missing, limit: int = _RENDER_LIMIT) -> str:
    """Render an expected value as :func:`render` does, its matchers in words: ``<any number>``, ``<any value>``.

    A student reads "expected {..., "timestamp": <any number>}", never the fixture's
    ``{"$type": "number"}``; a literal key ``$$O`` shows as the key it stands for, ``$O``.
    """
    if isinstance(value, _Missing):
        return render(value, limit)
    text = json.dumps(_in_words(value), ensure_ascii=False)
    text = text.replace('"' + _WORDS_OPEN, "<").replace(_WORDS_CLOSE + '"', ">")
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Brackets no fixture writes, so that only the matchers' words lose their quotes.
_WORDS_OPEN, _WORDS_CLOSE = "\u27ea", "\u27eb"


def _in_words(value: JsonValue) -> JsonValue:
    if isinstance(value, dict) and is_matcher(value):
        kind, argument = next(iter(value.items()))
        return _WORDS_OPEN + _describe_matcher(kind, argument) + _WORDS_CLOSE
    if isinstance(value, dict):
        return {literal_key(key): _in_words(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_in_words(item) for item in value]
    return value


#: An expected object's key that starts with this stands for the key with one ``$`` less:
#: ``$$O`` is the literal key ``$O`` (fixture-format.md, Matching), since ``$`` keys are matchers.
LITERAL_PREFIX: Final = "$$"


def literal_key(key: str) -> str:
    """The actual key an expected object's ``key`` stands for: ``$$O`` -> ``$O``, any other key itself."""
    return key[1:] if key.startswith(LITERAL_PREFIX) else key


def escape_keys(value: JsonValue) -> JsonValue:
    """``value`` written as an expected value that matches exactly it: every key starting with ``$`` gets one more."""
    if isinstance(value, dict):
        return {("$" + key if key.startswith("$") else key): escape_keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [escape_keys(item) for item in value]
    return value


def is_matcher(value: JsonValue) -> bool:
    """True when ``value`` is one of the matcher objects ($type, $oneOf, $any)."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in MATCHER_KEYS


def json_type_of(value: JsonValue) -> str:
    """The JSON type name of a Python value decoded from JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _has_type(value: JsonValue, type_name: str) -> bool:
    actual = json_type_of(value)
    if type_name == "integer":
        return actual == "number" and float(value).is_integer()  # type: ignore[arg-type]
    return actual == type_name


def first_divergence(expected: JsonValue, actual: JsonValue | _Missing, path: str = "") -> Divergence | None:
    """Return the first divergence between ``expected`` and ``actual``, or None if they match."""
    return next(iter_divergences(expected, actual, path), None)


def iter_divergences(expected: JsonValue, actual: JsonValue | _Missing, path: str = "") -> Iterator[Divergence]:
    """Every divergence between ``expected`` and ``actual``, depth-first in document order.

    The first one is :func:`first_divergence`'s; the rest are what ``--all-divergences``
    lists. Below a divergence that replaces a whole value (a type or length mismatch, a
    failed matcher) nothing more is reported.
    """
    if isinstance(expected, dict) and is_matcher(expected):
        divergence = _match_matcher(expected, actual, path)
        if divergence is not None:
            yield divergence
        return
    if isinstance(actual, _Missing):
        yield Divergence(path, render_expected(expected), render(actual), kind="missing")
    elif isinstance(expected, dict):
        if isinstance(actual, dict):
            yield from _match_object(expected, actual, path)
        else:
            yield Divergence(path, render_expected(expected), render(actual), kind="type")
    elif isinstance(expected, list):
        if isinstance(actual, list):
            yield from _match_array(expected, actual, path)
        else:
            yield Divergence(path, render_expected(expected), render(actual), kind="type")
    elif not _scalar_equal(expected, actual):
        kind = "value" if json_type_of(expected) == json_type_of(actual) else "type"
        yield Divergence(path, render_expected(expected), render(actual), kind=kind)


def _scalar_equal(expected: JsonValue, actual: JsonValue) -> bool:
    # bool is an int subclass in Python, but true and 1 are different JSON values.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual or _same_double(expected, actual)
    return type(expected) is type(actual) and expected == actual


def _same_double(expected: int | float, actual: int | float) -> bool:
    """Equal as IEEE-754 doubles, the IR's numbers (JavaScript's ``number``).

    JSON text of an integral double past 2**53 (``123456789012345680000``, as JavaScript
    prints it) parses in Python as an int whose exact value differs from the double's, so
    ``==`` between that int and the same number written as a float is False.
    """
    try:
        return float(expected) == float(actual)
    except OverflowError:  # an int beyond any double: only exactly equal ints are the same
        return False


def _match_object(expected: dict[str, JsonValue], actual: dict[str, JsonValue], path: str) -> Iterator[Divergence]:
    keys = {literal_key(key): value for key, value in expected.items()}
    for key, expected_value in keys.items():
        yield from iter_divergences(expected_value, actual.get(key, MISSING), join_key(path, key))
    for key in actual:
        if key not in keys:
            # Shown at the parent, whole, so that "expected {} but got {...}" reads at a glance.
            # render() cuts the key too: a key can be a megabyte long.
            yield Divergence(
                path,
                render_expected(expected),
                render(actual),
                f"unexpected key {render(key)}: {render(actual[key], _KEY_VALUE_LIMIT)}",
                "unexpected",
                key,
            )
            return


def _match_array(expected: list[JsonValue], actual: list[JsonValue], path: str) -> Iterator[Divergence]:
    # Shared items first, so the first divergence names the first differing item when there
    # is one; then the length, at the array.
    yield from _pairwise(expected, actual, path)
    if len(actual) != len(expected):
        yield _length_divergence(expected, actual, path)


def _pairwise(expected: list[JsonValue], actual: list[JsonValue], path: str) -> Iterator[Divergence]:
    for index, (expected_item, actual_item) in enumerate(zip(expected, actual, strict=False)):
        yield from iter_divergences(expected_item, actual_item, join_index(path, index))


def _length_divergence(expected: list[JsonValue], actual: list[JsonValue], path: str) -> Divergence:
    # Every shared item matched (or was reported): name the first item one side lacks.
    if len(actual) < len(expected):
        index = len(actual)
        note = f"first missing item, [{index}]: {render_expected(expected[index])}"
        return Divergence(path, _items(len(expected)), _items(len(actual)), note, "missing")
    index = len(expected)
    note = f"first extra item, [{index}]: {render(actual[index])}"
    return Divergence(path, _items(len(expected)), _items(len(actual)), note, "unexpected")


def _items(count: int) -> str:
    return f"{count} item" if count == 1 else f"{count} items"


def _match_matcher(matcher: dict[str, JsonValue], actual: JsonValue | _Missing, path: str) -> Divergence | None:
    kind, argument = next(iter(matcher.items()))
    if isinstance(actual, _Missing):
        return Divergence(path, _describe_matcher(kind, argument), render(actual), kind="missing")
    if kind == "$any":
        return None
    if kind == "$type":
        if isinstance(argument, str) and _has_type(actual, argument):
            return None
        return Divergence(path, f"any {argument}", render(actual), kind="type")
    alternatives = argument if isinstance(argument, list) else []
    nearest: Divergence | None = None
    for alternative in alternatives:
        divergence = first_divergence(alternative, actual, path)
        if divergence is None:
            return None
        if nearest is None or len(divergence.path) > len(nearest.path):
            nearest = divergence
    note = f"matches none of {len(alternatives)} allowed alternatives"
    if nearest is not None and nearest.path != path:
        note += f"; nearest differs at {nearest}"
    return Divergence(path, _describe_matcher(kind, argument), render(actual), note)


def _describe_matcher(kind: str, argument: JsonValue) -> str:
    if kind == "$any":
        return "any value"
    if kind == "$type":
        return f"any {argument}"
    return f"one of {render_expected(argument)}"
