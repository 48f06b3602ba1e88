"""What an observation's special values mean, said in words next to the divergence.

The observations use a few values whose meaning a student cannot guess from the name alone:
``same_object_as: null``, ``threw: null``, ``input_unchanged: false``, a clock reading where a
value from the input was expected. :func:`explain` adds that meaning to the divergence's note,
so "expected "terminal_event" but got null" also says what null means there. The path, the
expected and the actual text stay as they were: groups and reports keyed on them do not move.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Final

from conformance.judging.outcome import Divergence

#: (last key of the path, the actual value as rendered) -> what that value means there.
_MEANINGS: Final[dict[tuple[str, str], str]] = {
    ("same_object_as", "null"): (
        "null: the value is none of the objects it was compared with, "
        "so it is a copy or a new object, not the very object the event carried"
    ),
    ("threw", "null"): "null: the call returned without throwing",
    ("error", "null"): "null: no error was reported",
    ("input_unchanged", "false"): "false: the function changed its input in place",
    ("context_unchanged", "false"): "false: the run changed the caller's context in place",
    ("finished", "false"): "false: the stream never ended, so a consumer would wait forever",
    ("result", "null"): "null: there was no result, the call threw or never settled",
}
#: (last key of the path, the expected value as rendered) -> what was expected, in words.
_EXPECTED_MEANINGS: Final[dict[tuple[str, str], str]] = {
    ("threw", "null"): "null: the call was expected to return without throwing",
    ("error", "null"): "null: no error was expected",
    ("same_object_as", "null"): "null: a value of its own was expected, not an object it was compared with",
}
#: Milliseconds since 1970 between 2001 and 2286: what Date.now() and time.time() * 1000 give.
_CLOCK_MS: Final = (1_000_000_000_000, 9_999_999_999_999)


def explain(divergence: Divergence) -> Divergence:
    """``divergence`` with what its actual value means added to the note, when the glossary knows."""
    meaning = _meaning(divergence)
    if meaning is None or meaning in divergence.note:
        return divergence
    note = f"{divergence.note}; {meaning}" if divergence.note else meaning
    return replace(divergence, note=note)


def _meaning(divergence: Divergence) -> str | None:
    key = _last_key(divergence.path)
    known = _MEANINGS.get((key, divergence.actual)) or _EXPECTED_MEANINGS.get((key, divergence.expected))
    if known is not None:
        return known
    if key == "timestamp" and _is_clock_reading(divergence.actual) and not divergence.expected.startswith("any"):
        return "the value got is a clock reading (Date.now()), recorded when the message was made; the input's own timestamp was expected"
    return None


def _last_key(path: str) -> str:
    tail = path.rsplit(".", 1)[-1]
    return tail.split("[", 1)[0]


def _is_clock_reading(rendered: str) -> bool:
    try:
        value = json.loads(rendered)
    except ValueError:
        return False
    low, high = _CLOCK_MS
    return isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high
