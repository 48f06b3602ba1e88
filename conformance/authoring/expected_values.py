"""Lint: every expected value that is an IR shape (a message, a block, a model event, a request) is valid IR.

An expectation may hold matchers (``$type``, ``$oneOf``, ``$any``), so the check validates
concrete values the expectation accepts: each ``$type`` becomes a sample of its type and each
``$oneOf`` one of its alternatives (every alternative in turn). An expectation holding ``$any``
or ``$type: object|array`` is not judged: no one sample stands for everything it accepts. A case whose expected value no
implementation could ever produce would fail every implementation, the reference included.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.authoring.problems import Problem
from conformance.common.jsontypes import JsonValue
from conformance.judging.matcher import is_matcher, literal_key
from conformance.loading import quick_schema
from conformance.model.cases import Case

#: A concrete value of each ``$type``.
SAMPLES: dict[str, JsonValue] = {"string": "s", "number": 0.5, "integer": 0, "boolean": False, "object": {}, "array": [], "null": None}
_SHAPES = {
    "make_text": "TextContent",
    "make_user_message": "UserMessage",
    "make_assistant_message": "AssistantMessage",
    "reduce_agent_state": "AgentState",
}


def instances(value: JsonValue, choice: int) -> JsonValue:
    """A concrete value the expectation accepts: ``$type`` a sample of its type, ``$oneOf`` its alternative ``choice``."""
    if isinstance(value, dict) and is_matcher(value):
        kind, argument = next(iter(value.items()))
        if kind == "$type":
            return SAMPLES[str(argument)]
        if kind == "$oneOf" and isinstance(argument, list):
            return instances(argument[min(choice, len(argument) - 1)], choice)
        return None  # $any: never reached, expectations holding one are not judged (see _problem_with)
    if isinstance(value, dict):  # a key written $$x is the literal key $x
        return {literal_key(key): instances(item, choice) for key, item in value.items()}
    if isinstance(value, list):
        return [instances(item, choice) for item in value]
    return value


def expected_ir(case: Case) -> Iterator[tuple[str, str, JsonValue]]:
    """(where, IR definition, expected value) for every expected value of a course case that is an IR shape."""
    if case.operation in _SHAPES and case.expect:
        yield "expect.value", _SHAPES[case.operation], case.expect["value"]
    if case.operation == "current_system_message" and case.expect and case.expect.get("value") is not None:
        yield "expect.value", "SystemMessage", case.expect["value"]
    model_events = case.operation in {"scripted_model", "provider_model_stream"} or case.input.get("kind") == "assistant"
    # Chapter 05's requests are wire requests and fetch calls, not IR contexts.
    contexts = case.operation not in {"provider_model_stream", "provider_fetch_stream"}
    for index, step in enumerate(case.steps):
        expect = step.get("expect")
        if not isinstance(expect, dict):
            continue
        events = expect.get("events")
        if model_events and events is not None:
            yield f"steps[{index}].expect.events", "ModelEventList", events
        if model_events and expect.get("state") == "resolved" and "value" in expect:
            yield f"steps[{index}].expect.value", "AssistantMessage", expect["value"]
        requests = expect.get("requests") if contexts else None
        for request_index, request in enumerate(requests if isinstance(requests, list) else []):
            yield f"steps[{index}].expect.requests[{request_index}]", "AgentContext", request


def _first_error(shape: str, value: JsonValue) -> str | None:
    """Why ``value`` is not a valid ``shape`` (a list of model events for ``ModelEventList``), or None."""
    items = value if shape == "ModelEventList" and isinstance(value, list) else [value]
    definition = "ModelEvent" if shape == "ModelEventList" else shape
    for position, item in enumerate(items):
        error = next(quick_schema.errors("ir.schema.json", item, f"/$defs/{definition}"), None)
        if error is not None:
            at = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
            prefix = f"[{position}]" if shape == "ModelEventList" else ""
            return f"{prefix}{at}: {error.message}"
    return None


def _matcher_kinds(value: JsonValue) -> set[str]:
    """The matcher keys used anywhere in ``value``."""
    if isinstance(value, dict):
        found = {next(iter(value))} if is_matcher(value) else set()
        return found.union(*(_matcher_kinds(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(_matcher_kinds(item) for item in value))
    return set()


def _has_open_matcher(value: JsonValue) -> bool:
    """Whether ``value`` holds ``$any`` or ``$type: object|array``: no one sample stands for all it accepts."""
    if isinstance(value, dict):
        if is_matcher(value):
            kind, argument = next(iter(value.items()))
            if kind == "$any" or (kind == "$type" and argument in ("object", "array")):
                return True
        return any(_has_open_matcher(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_open_matcher(item) for item in value)
    return False


def _problem_with(shape: str, value: JsonValue) -> str | None:
    """The first way in which some value the expectation accepts is not valid IR (every ``$oneOf`` branch tried).

    An expectation holding ``$any`` or ``$type: object|array`` accepts valid IR whatever the
    rest says is wrong with an empty sample (``usage: {$type: object}`` accepts a whole usage):
    it is not judged here, rather than refused for a sample no author meant.
    """
    if _has_open_matcher(value):
        return None
    for choice in range(3 if "$oneOf" in _matcher_kinds(value) else 1):
        error = _first_error(shape, instances(value, choice))
        if error is not None:
            return error
    return None


def expected_ir_problems(cases: list[Case]) -> list[Problem]:
    """One problem per expected IR value that no valid IR value could match."""
    found: list[Problem] = []
    for case in cases:
        for where, shape, value in expected_ir(case):
            problem = _problem_with(shape, value)
            if problem is not None:
                definition = "list of ModelEvent" if shape == "ModelEventList" else shape
                at, _, why = problem.partition(": ")
                message = (
                    f"{where}{at}: no valid {definition} (spec/schemas/ir.schema.json) matches this expectation: {why}"
                    " (each $type read as a sample of its type, each $oneOf alternative in turn)"
                )
                found.append(Problem(case.file, _line(case, where), case.id, message))
    return found


def _line(case: Case, where: str) -> int:
    """The line of the step the value is in, else the case's."""
    if where.startswith("steps[") and case.step_lines:
        index = int(where[len("steps[") : where.index("]")])
        if index < len(case.step_lines):
            return case.step_lines[index]
    return case.line
