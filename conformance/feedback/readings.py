"""Known readings of a symptom: what a diverging value says about the bug, in one sentence.

A wrong value is often a right value from the wrong place. When the value observed at a key
is the value the same key has in another item of the case's own input (another turn of the
script, another message of the history) and the expected value is that key's value in the
item that should have been used, the symptom reads as "the wrong item was used":

- a scripted model's call that shows ``timestamp 5001`` (``turns[0]``'s) where ``5002``
  (``turns[1]``'s) is expected replayed the first turn;
- ``currentSystemMessage`` returning ``timestamp 50`` (``messages[1]``'s) where ``0``
  (``messages[0]``'s) is expected took it from a later message.

Likewise, in a scenario, a text observed at one step that is exactly what another step of
the case expects at the same key (an ``errorMessage``, a ``delta``) says this step behaved
like that one. A value that matches nothing of the case, or several items alike, has no
reading: a guess would mislead more than silence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping

from conformance.common.jsontypes import JsonValue
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case

# The key a divergence ends in: ``steps[4].events[0].partial.timestamp`` -> ``timestamp``.
_LAST_KEY = re.compile(r"(?:^|\.)([A-Za-z_]\w*)$")
# Keys whose values are kinds (an event type, a stop reason): many steps share each value, so
# equality with another step says nothing about which step this one behaved like.
_KIND_KEYS = frozenset({"type", "state", "finished", "stopReason", "reason", "role", "same_object_as", "provider", "model", "api"})
# Another step's text is a reading only when it is long enough not to be a coincidence.
_STEP_TEXT_MIN = 6
_MAX_DEPTH = 6
_NOUNS: Mapping[str, str] = {"turns": "turn", "messages": "message"}
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def symptom_reading(case: Case, outcome: Outcome) -> str | None:
    """What the case's first divergence says about the bug, when a known reading fits; else None."""
    divergence = outcome.divergence
    if divergence is None or divergence.kind != "value" or divergence.key:
        return None
    match = _LAST_KEY.search(divergence.path)
    expected, actual = _parsed(divergence.expected), _parsed(divergence.actual)
    if match is None or not _plain(expected) or not _plain(actual) or _same(expected, actual):
        return None
    key = match[1]
    return _input_reading(case, outcome, key, expected, actual) or _step_reading(case, outcome, key, actual)


def _input_reading(case: Case, outcome: Outcome, key: str, expected: JsonValue, actual: JsonValue) -> str | None:
    """The observed value is one input item's, the expected another's: the wrong item was used."""
    for name, items in _item_lists(case.input):
        with_actual = [index for index, item in enumerate(items) if _holds(item, key, actual)]
        with_expected = [index for index, item in enumerate(items) if _holds(item, key, expected)]
        if len(with_actual) != 1 or len(with_expected) != 1 or with_actual == with_expected:
            continue
        used, wanted = with_actual[0], with_expected[0]
        head = f"{key} {_shown(actual)} belongs to {name}[{used}], {_shown(expected)} to {name}[{wanted}]"
        call = _call_position(case, outcome.step_index)
        noun = _NOUNS.get(name.rsplit(".", 1)[-1], "item")
        if call is not None and noun == "turn":
            position, call_name = call
            who = f"the {_ordinal(position)} call ({call_name})"
            if used < wanted:
                why = "did an earlier call not use up its turn?"
                return f"{head}: {who} replayed the {_ordinal(used)} turn instead of playing {name}[{wanted}] ({why})"
            why = "did the cursor move for a call that played nothing?"
            return f"{head}: {who} played {name}[{used}], skipping {name}[{wanted}] ({why})"
        direction = "a later" if used > wanted else "an earlier"
        return f"{head}: the value was taken from {direction} {noun} ({name}[{used}]) instead of {name}[{wanted}]"
    return None


def _step_reading(case: Case, outcome: Outcome, key: str, actual: JsonValue) -> str | None:
    """A text this step observed that another step of the case expects at the same key: this step behaved like that one."""
    index = outcome.step_index
    if not case.is_scenario or index is None or key in _KIND_KEYS or not isinstance(actual, str) or len(actual) < _STEP_TEXT_MIN:
        return None
    if any(_holds(item, key, actual) for _, items in _item_lists(case.input) for item in items):
        return None  # the input's own text: not another step's doing
    others = [number for number, step in enumerate(case.steps) if number != index and _holds(step.get("expect"), key, actual)]
    if len(others) != 1 or _holds(case.steps[index].get("expect"), key, actual):
        return None
    return (
        f"{key} {_shown(actual)} is what {_step_name(case, others[0])} expects, not {_step_name(case, index)}: "
        "this step behaved like that one"
    )


def _item_lists(value: JsonValue, name: str = "", depth: int = 0) -> Iterator[tuple[str, list[JsonValue]]]:
    """Every list of objects in the input, with its dotted name (``turns``, ``context.messages``)."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _item_lists(item, f"{name}.{key}" if name else key, depth + 1)
    elif isinstance(value, list) and len(value) > 1 and all(isinstance(item, dict) for item in value):
        yield name, value


def _holds(value: JsonValue, key: str, wanted: JsonValue, depth: int = 0) -> bool:
    """True when ``value`` has ``key`` with the value ``wanted`` somewhere inside."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return any((name == key and _same(item, wanted)) or _holds(item, key, wanted, depth + 1) for name, item in value.items())
    if isinstance(value, list):
        return any(_holds(item, key, wanted, depth + 1) for item in value)
    return False


def _call_position(case: Case, step_index: int | None) -> tuple[int, str] | None:
    """For a step of a named call, the call's position among the case's calls (0 for the first) and its name."""
    if step_index is None or step_index >= len(case.steps) or not case.is_scenario:
        return None
    call = case.steps[step_index].get("call")
    if not isinstance(call, str):
        return None
    calls = list(dict.fromkeys(str(step["call"]) for step in case.steps if step.get("action") == "stream" and "call" in step))
    return (calls.index(call), call) if call in calls else None


def _parsed(rendered: str) -> JsonValue:
    """The rendered value, or None when it is not whole JSON (cut short, or a missing key)."""
    try:
        value: JsonValue = json.loads(rendered)
    except ValueError:
        return None
    return value


def _plain(value: JsonValue) -> bool:
    """A value that can be recognised elsewhere: a number or a non-empty string (not a flag, not null)."""
    return (isinstance(value, int | float) and not isinstance(value, bool)) or (isinstance(value, str) and value != "")


def _same(left: JsonValue, right: JsonValue) -> bool:
    """Equal and of the same kind (``1`` is not ``true``)."""
    return isinstance(left, bool) == isinstance(right, bool) and isinstance(left, str) == isinstance(right, str) and left == right


def _shown(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False)


def _ordinal(index: int) -> str:
    return _ORDINALS[index] if index < len(_ORDINALS) else f"{index + 1}th"


def _step_name(case: Case, index: int) -> str:
    """``steps[1] (consume of c1)``."""
    step = case.steps[index]
    call = f" of {step['call']}" if "call" in step else ""
    return f"steps[{index}] ({step.get('action')}{call})"
