"""Profile pi-ai-1: every value a case hands a port is a valid upstream value.

Upstream's type declarations (``@earendil-works/pi-ai`` 1.6.0 ``dist/types.d.ts``, restated as
``spec/schemas/pi-ai-1-ir.schema.json``) require fields the course leaves out (an assistant
message's ``api``, the full ``usage``, every ``timestamp``) and have no course-only field
(``rawArguments``). A port that models those types strictly would fail on such an input, not
on behaviour, and a port that fills a missing field in would make the outcome its own choice.
So the loader checks each input of a pi-ai-1 case (the pi-ai-1 view of a shared case
included) against the type the upstream function takes, and reports the first divergence
at its path.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from conformance.common.jsontypes import JsonObject, JsonValue

SCHEMA = "pi-ai-1-ir.schema.json"

# Where each operation's input keeps upstream values: (key path, type). "*" is every item of a list.
_INPUT_PLACES: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    "content_text": ((("content", "*"), "AnyContent"),),
    "system_message_text": ((("message",), "SystemMessage"),),
    "render_system_message_update": ((("message",), "SystemMessage"),),
    "current_system_message": ((("messages", "*"), "Message"),),
    "current_system_prompt": ((("messages", "*"), "Message"),),
    "current_tools": ((("messages", "*"), "Message"),),
    "normalize_context": ((("context", "messages", "*"), "Message"), (("context", "tools", "*"), "Tool")),
    "faux_message": ((("content", "*"), "AssistantContent"),),
    "faux_provider": ((("responses", "*", "message"), "AssistantMessage"), (("responses", "*", "factory"), "AssistantMessage")),
}

_STEP_PLACES: dict[str, tuple[tuple[str, ...], str]] = {
    "stream": (("context", "messages", "*"), "Message"),
    "set_responses": (("responses", "*", "message"), "AssistantMessage"),
    "append_responses": (("responses", "*", "message"), "AssistantMessage"),
}
_STEP_FACTORY_PLACES: tuple[str, ...] = ("set_responses", "append_responses")


def _at(value: JsonValue, keys: tuple[str, ...], where: list[str | int]) -> Iterator[tuple[list[str | int], JsonValue]]:
    """Every value reached by following ``keys`` from ``value``; a missing key reaches nothing."""
    if not keys:
        yield where, value
        return
    key, rest = keys[0], keys[1:]
    if key == "*":
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield from _at(item, rest, [*where, index])
    elif isinstance(value, dict) and key in value:
        yield from _at(value[key], rest, [*where, key])


def _check(value: JsonValue, definition: str, where: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    from conformance.loading import quick_schema, schema_errors

    errors = list(quick_schema.errors(SCHEMA, value, f"/$defs/{definition}"))
    if errors:
        inner, reason = schema_errors.describe_best(errors)
        yield [*where, *inner], f"not an upstream {definition} (pi-ai 1.6.0 types.d.ts): {reason}"


def input_problems(raw: JsonObject) -> Iterator[tuple[list[str | int], str]]:
    """(path, message) for each input value of the pi-ai-1 case ``raw`` that upstream's types reject."""
    for where, value, definition in _inputs(raw):
        yield from _check(value, definition, where)


def input_paths(raw: JsonObject) -> list[list[str | int]]:
    """Where the case ``raw`` holds upstream input values: :func:`input_problems` says what is wrong there.

    The fixture schema describes these values too (for editors); the loader leaves its
    complaints about them to this module, whose message names the upstream type.
    """
    return [where for where, _, _ in _inputs(raw)]


def _inputs(raw: JsonObject) -> Iterator[tuple[list[str | int], JsonValue, str]]:
    """(path, value, upstream type) of each input value of the pi-ai-1 case ``raw``."""
    operation = raw.get("operation")
    input_value = raw.get("input")
    if isinstance(operation, str) and isinstance(input_value, dict):
        yield from _input_values(operation, input_value)
    steps = raw.get("steps")
    if not isinstance(steps, list):
        return
    assistant_stream = operation == "event_stream" and isinstance(input_value, dict) and input_value.get("kind") == "assistant"
    for index, step in enumerate(steps):
        if isinstance(step, dict):
            yield from _step_values(step, ["steps", index], operation, assistant_stream)


def _input_values(operation: str, input_value: JsonObject) -> Iterator[tuple[list[str | int], JsonValue, str]]:
    """The upstream values in the case's ``input``."""
    for keys, definition in _INPUT_PLACES.get(operation, ()):
        for where, value in _at(input_value, keys, ["input"]):
            if operation == "content_text" and isinstance(value, str):
                continue
            yield where, value, definition
    if operation == "faux_message" and isinstance(input_value.get("content"), dict):
        yield ["input", "content"], input_value["content"], "AssistantContent"


def _step_values(
    step: JsonObject, at: list[str | int], operation: object, assistant_stream: bool
) -> Iterator[tuple[list[str | int], JsonValue, str]]:
    """The upstream values a step hands the port: a pushed event, an end's result, a faux provider's responses."""
    action = step.get("action")
    if assistant_stream and action == "push":
        yield [*at, "event"], step.get("event"), "AssistantMessageEvent"
    elif assistant_stream and action == "end" and "result" in step:
        yield [*at, "result"], step["result"], "AssistantMessage"
    elif operation == "faux_provider" and isinstance(action, str) and action in _STEP_PLACES:
        keys, definition = _STEP_PLACES[action]
        for place, value in _at(step, keys, at):
            yield place, value, definition
        if action in _STEP_FACTORY_PLACES:
            for place, value in _at(step, ("responses", "*", "factory"), at):
                yield place, value, "AssistantMessage"


# -- expected values: closed shapes -------------------------------------------------------

# An expected value of the schema named, for each operation's top-level expectation ``value``.
_EXPECTED_VALUE: dict[str, dict[str, Any]] = {
    "current_system_message": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/SystemMessage"}]},
    "faux_block": {"$ref": "#/$defs/AnyContent"},
    "faux_message": {"$ref": "#/$defs/AssistantMessage"},
    "current_tools": {"type": "array", "items": {"$ref": "#/$defs/Tool"}},
    "normalize_context": {
        "type": "object",
        "properties": {"messages": {"type": "array", "items": {"$ref": "#/$defs/Message"}}},
        "additionalProperties": False,
    },
}
_EVENT = {"$ref": "#/$defs/AssistantMessageEvent"}
_MESSAGE = {"$ref": "#/$defs/AssistantMessage"}
_REQUEST = {
    "type": "object",
    "properties": {
        "context": {"type": "object", "properties": {"messages": {"type": "array", "items": {"$ref": "#/$defs/Message"}}}},
        "call_count": True,
    },
}


@cache
def _defs() -> dict[str, Any]:
    from conformance.model.schemas import load_schema

    defs = load_schema(SCHEMA).get("$defs", {})
    return defs if isinstance(defs, dict) else {}


def _is_matcher(value: object) -> bool:
    """A matcher (``{$type: number}``, ``{$any: true}``) stands for any value: keys starting with ``$``."""
    return isinstance(value, dict) and any(isinstance(key, str) and key.startswith("$") and not key.startswith("$$") for key in value)


def _resolve(schema: Any) -> dict[str, Any]:
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        schema = _defs().get(schema["$ref"].rsplit("/", 1)[-1], {})
    return schema if isinstance(schema, dict) else {}


def _condition_holds(condition: Any, value: dict[str, Any]) -> bool:
    """An ``if`` of the IR schema: every property it names has the const (or one of the enum) it says."""
    properties = condition.get("properties") if isinstance(condition, dict) else None
    if not isinstance(properties, dict):
        return False
    for key, rule in properties.items():
        actual = value.get(key)
        if isinstance(rule, dict) and "const" in rule and actual != rule["const"]:
            return False
        if isinstance(rule, dict) and "enum" in rule and actual not in rule["enum"]:
            return False
    return True


def _branch(value: dict[str, Any], alternatives: list[Any]) -> dict[str, Any] | None:
    """The alternative whose ``type`` or ``role`` const is the value's."""
    for alternative in map(_resolve, alternatives):
        properties = alternative.get("properties", {})
        for key in ("type", "role"):
            rule = properties.get(key) if isinstance(properties, dict) else None
            if isinstance(rule, dict) and "const" in rule and value.get(key) == rule["const"]:
                return alternative
    return None


def unknown_keys(value: Any, schema: Any, where: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    """(path, message) for each key of ``value`` that its closed upstream type does not declare; matchers stand for anything."""
    if _is_matcher(value):
        return
    schema = _resolve(schema)
    if isinstance(value, list):
        items = schema.get("items")
        if items is not None:
            for index, item in enumerate(value):
                yield from unknown_keys(item, items, [*where, index])
    elif isinstance(value, dict):
        alternatives = schema.get("oneOf") or schema.get("anyOf")
        if isinstance(alternatives, list):
            branch = _branch(value, alternatives)
            if branch is not None:
                yield from unknown_keys(value, branch, where)
        else:
            yield from _unknown_object_keys(value, schema, where)


def _unknown_object_keys(value: dict[str, Any], schema: dict[str, Any], where: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    """An object of one shape: the shape's conditional parts that apply to it, then each of its keys."""
    from conformance.loading.schema_errors import unknown_key_message

    for part in schema.get("allOf", []):
        if isinstance(part, dict) and _condition_holds(part.get("if"), value):
            yield from unknown_keys(value, part.get("then"), where)
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            yield from unknown_keys(item, properties[key], [*where, key])
        elif extra is False:
            yield [*where, key], unknown_key_message(key, properties)
        elif isinstance(extra, dict):
            yield from unknown_keys(item, extra, [*where, key])


def expectation_problems(raw: JsonObject) -> Iterator[tuple[list[str | int], str]]:
    """(path, message) for each key of an expected upstream value (a message, an event, a block) that its type does not have."""
    operation = str(raw.get("operation"))
    expect = raw.get("expect")
    if isinstance(expect, dict) and "value" in expect and operation in _EXPECTED_VALUE:
        yield from unknown_keys(expect["value"], _EXPECTED_VALUE[operation], ["expect", "value"])
    input_value = raw.get("input")
    assistant = operation == "faux_provider" or (
        operation == "event_stream" and isinstance(input_value, dict) and input_value.get("kind") == "assistant"
    )
    steps = raw.get("steps")
    if not assistant or not isinstance(steps, list):
        return
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(expected := step.get("expect"), dict):
            continue
        where: list[str | int] = ["steps", index, "expect"]
        yield from unknown_keys(expected.get("events"), {"type": "array", "items": _EVENT}, [*where, "events"])
        if step.get("action") == "result" and "value" in expected:
            yield from unknown_keys(expected["value"], _MESSAGE, [*where, "value"])
        yield from unknown_keys(expected.get("requests"), {"type": "array", "items": _REQUEST}, [*where, "requests"])
