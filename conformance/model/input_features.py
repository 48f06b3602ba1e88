"""Input features: a whole class of inputs a port's types may not hold, opted out of as one feature.

A port of an older API can have no type for some of upstream's values: no system-role message
(its system prompt lives outside the transcript), no ``"pending"`` stop reason. Each such class
is a feature the loader gives every case whose input holds a value of it, wherever in the input
or the steps it is (a message of a context, a faux response, a pushed event's partial): so
``--without-feature system-messages`` (or ``unclaimed_features`` in a handshake) skips exactly
those cases, counted as not claimed, and a binding need not refuse each one from ``to_impl``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from conformance.common.jsontypes import JsonValue


@dataclass(frozen=True)
class InputFeature:
    """A class of input values: its feature name, what it is, and the test of one value (a JSON object)."""

    name: str
    description: str
    holds: Callable[[dict[str, JsonValue]], bool]


#: pi-ai-1's input features (spec/pi-ai-1/spec.md, Conventions), in the order the spec introduces the types.
PI_AI_1_INPUT_FEATURES: Final = (
    InputFeature(
        "system-messages",
        'a system-role message ({role: "system", content, sections?, ...}; PA-MSG-3) anywhere in the input',
        lambda value: value.get("role") == "system",
    ),
    InputFeature(
        "pending-stop-reason",
        'an assistant message whose stopReason is "pending" (PA-STOP-1) anywhere in the input',
        lambda value: value.get("stopReason") == "pending",
    ),
)


def _objects(value: JsonValue) -> Iterator[dict[str, JsonValue]]:
    """Every JSON object inside ``value``, itself included."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def input_features(features: tuple[InputFeature, ...], *values: JsonValue) -> tuple[str, ...]:
    """The names of ``features`` some object inside ``values`` (a case's input and steps) belongs to."""
    objects = [found for value in values for found in _objects(value)]
    return tuple(feature.name for feature in features if any(feature.holds(found) for found in objects))


def case_input_features(features: tuple[InputFeature, ...], input_value: JsonValue, steps: JsonValue) -> tuple[str, ...]:
    """The input features of a case: what its input and its steps give the port, not what the steps expect."""
    given: list[JsonValue] = []
    if isinstance(steps, list):
        given = [{key: value for key, value in step.items() if key != "expect"} for step in steps if isinstance(step, dict)]
    return input_features(features, input_value, given)
