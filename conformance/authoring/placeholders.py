"""Placeholders that ``fixtures new`` writes and ``fixtures lint`` refuses until they are filled in.

A placeholder is any string value that starts with ``TODO:``. Using strings (rather than
leaving fields out) keeps the scaffold close to a finished case, so the author sees every
field to fill; using one recognisable prefix lets lint say exactly which ones are left.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.common.jsontypes import JsonValue

PREFIX = "TODO:"


def is_placeholder(value: object) -> bool:
    """True for a string the scaffold left for the author to replace."""
    return isinstance(value, str) and value.startswith(PREFIX)


def find(value: JsonValue, where: list[str | int] | None = None) -> Iterator[tuple[list[str | int], str]]:
    """Every placeholder inside ``value``, with its path, in document order."""
    where = where or []
    if is_placeholder(value):
        yield where, str(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if is_placeholder(key):
                yield [*where, key], key
            yield from find(item, [*where, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from find(item, [*where, index])


def covers(placeholder_path: str, problem_path: str) -> bool:
    """True when a loader problem at ``problem_path`` is only the consequence of the placeholder.

    The schema rejects most placeholders (a string where a message belongs); lint reports
    the placeholder instead, which says what to write rather than what is wrong.
    """
    if problem_path == placeholder_path:
        return True
    return problem_path.startswith(placeholder_path) and problem_path[len(placeholder_path)] in ".["
