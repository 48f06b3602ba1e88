"""Unknown keys in the expected IR values of a course case, each with its path and a did-you-mean.

The fixture schema lets an expected value (an event, a partial, a message, a block, usage, a
recorded request, a context) hold matchers anywhere, so it cannot say that ``content_index`` is
not a key of any event. Here every object whose shape the IR fixes is compared with that
shape's keys; a matcher stands for any value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from conformance.common.jsontypes import JsonObject
from conformance.loading.schema_errors import (
    DISCRIMINATORS,
    MATCHER_KEYS,
    Path,
    allowed_keys,
    const_of,
    matcher_key_problem,
    names_branch,
    no_such_block,
    resolve_ref,
    short,
    unknown_key_message,
    without_discriminator,
)


def _def(name: str) -> Mapping[str, Any]:
    return resolve_ref(name)


def expectation_problems(raw: JsonObject) -> list[tuple[Path, str]]:
    """Unknown keys in the expected IR values of a case, each as ``(path in the case, message)``."""
    operation = raw.get("operation")
    found: list[tuple[Path, str]] = []
    expect = raw.get("expect")
    if isinstance(expect, dict):
        shape = {
            "make_text": "TextContent",
            "make_user_message": "UserMessage",
            "make_assistant_message": "AssistantMessage",
            "current_system_message": "SystemMessage",
        }.get(str(operation))
        if shape is not None and "value" in expect:
            found.extend(_check(expect["value"], _def(shape), ("expect", "value")))
    steps = raw.get("steps")
    input_value = raw.get("input")
    assistant_kind = isinstance(input_value, dict) and input_value.get("kind") == "assistant"
    assistant = operation in {"scripted_model", "provider_model_stream"} or assistant_kind
    # Chapter 05's requests are wire requests (and fetch calls), not IR contexts.
    contexts = operation not in {"provider_model_stream", "provider_fetch_stream"}
    if isinstance(steps, list):
        for index, step in enumerate(steps):
            expected = step.get("expect") if isinstance(step, dict) else None
            if isinstance(expected, dict):
                found.extend(_step_problems(expected, ("steps", index, "expect"), assistant, contexts))
    return found


def _step_problems(expect: JsonObject, where: Path, assistant: bool, contexts: bool = True) -> Iterator[tuple[Path, str]]:
    if assistant:
        events = expect.get("events")
        if isinstance(events, list):
            for index, event in enumerate(events):
                yield from _check(event, _def("ModelEvent"), (*where, "events", index))
        if "value" in expect:
            shape = "ModelEvent" if "done" in expect else "AssistantMessage"
            yield from _check(expect["value"], _def(shape), (*where, "value"))
    requests = expect.get("requests")
    if isinstance(requests, list) and contexts:
        for index, request in enumerate(requests):
            yield from _check(request, _def("AgentContext"), (*where, "requests", index))
    if "context" in expect:
        yield from _check(expect["context"], _def("AgentContext"), (*where, "context"))


def _is_matcher(value: object) -> bool:
    return isinstance(value, dict) and any(key in value for key in MATCHER_KEYS)


def _check(value: Any, schema: Mapping[str, Any], where: Path) -> Iterator[tuple[Path, str]]:
    """Unknown keys of ``value`` against the IR ``schema`` (matchers stand for anything)."""
    if isinstance(value, dict) and (misspelt := matcher_key_problem(value)) is not None:
        yield (*where, misspelt[0]), misspelt[1]
        return
    if _is_matcher(value):
        return
    if isinstance(schema.get("$ref"), str):
        schema = resolve_ref(schema["$ref"])
    alternatives = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(alternatives, list):
        yield from _check_alternatives(value, [item for item in alternatives if isinstance(item, dict)], where)
    elif isinstance(value, dict):
        yield from _check_object(value, schema, where)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield from _check(item, schema["items"], (*where, index))


def _check_alternatives(value: Any, alternatives: list[Mapping[str, Any]], where: Path) -> Iterator[tuple[Path, str]]:
    """A value of a oneOf/anyOf: checked against the branch it names, or told that it names none."""
    resolved = [resolve_ref(item["$ref"]) if "$ref" in item else item for item in alternatives]
    branch = _pick(value, resolved)
    if branch is not None:
        yield from _check(value, branch, where)
    elif isinstance(value, dict) and (found := without_discriminator(value, resolved)) is not None:
        inner, message = found
        yield (*where, *inner), message
    elif isinstance(value, dict):
        yield from _unknown_discriminators(value, alternatives, where)


def _unknown_discriminators(value: Mapping[str, Any], alternatives: list[Mapping[str, Any]], where: Path) -> Iterator[tuple[Path, str]]:
    """A ``type`` / ``role`` that none of the alternatives has, with the ones they have."""
    for key in DISCRIMINATORS:
        names = [const_of(resolve_ref(item["$ref"]), key) for item in alternatives if "$ref" in item]
        names += [const_of(alternative, key) for alternative in alternatives]
        known = [name for name in names if name is not None]
        if known and key in value and not _is_matcher(value[key]):
            choices = ", ".join(map(repr, known))
            yield (*where, key), f"{short(value[key])} is not a known {key} here (one of {choices}){no_such_block(value[key])}"


def _check_object(value: Mapping[str, Any], schema: Mapping[str, Any], where: Path) -> Iterator[tuple[Path, str]]:
    """The keys of an object that its closed shape does not declare, then its values, each against its own shape."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    if schema.get("additionalProperties") is False:
        for key in value:
            if isinstance(key, str) and key not in properties:
                yield (*where, key), unknown_key_message(key, properties)
    for key, item in value.items():
        sub = properties.get(key)
        if isinstance(sub, dict):
            yield from _check(item, sub, (*where, key))


def _pick(value: Any, alternatives: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The alternative a value names by its ``type`` / ``role``; for an object naming neither, the one without that key."""
    if not isinstance(value, dict):
        return None
    for alternative in alternatives:
        if names_branch(alternative, value):
            return alternative
    if not any(key in value for key in DISCRIMINATORS):
        # An error turn has no role: the branch whose properties do not know 'role'.
        without = [alternative for alternative in alternatives if "role" not in allowed_keys(alternative)]
        if len(without) == 1:
            return without[0]
    return None
