"""The bundled fixtures: complete, loadable, covering every clause, with expected values that are valid IR."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.common.jsontypes import JsonValue
from conformance.judging.matcher import is_matcher
from conformance.loading.cases import LABS, Case
from conformance.loading.loader import Suite
from conformance.spec.clauses import load_clauses
from conformance.spec.schemas import validator

SAMPLES: dict[str, JsonValue] = {"string": "s", "number": 0.5, "integer": 0, "boolean": False, "object": {}, "array": [], "null": None}


def test_at_least_150_cases_across_all_labs(suite: Suite) -> None:
    assert len(suite.cases) >= 150
    assert {case.lab for case in suite.cases} == set(LABS)
    assert suite.broken == []


def test_every_clause_is_checked_by_some_case(suite: Suite) -> None:
    checked = {clause for case in suite.cases for clause in case.clauses}
    assert sorted(set(load_clauses()) - checked) == []


def instances(value: JsonValue, choice: int) -> JsonValue:
    """A concrete value the expectation accepts: $type → a sample, $oneOf → alternative ``choice``."""
    if isinstance(value, dict) and is_matcher(value):
        kind, argument = next(iter(value.items()))
        if kind == "$type":
            return SAMPLES[str(argument)]
        if kind == "$oneOf" and isinstance(argument, list):
            return instances(argument[min(choice, len(argument) - 1)], choice)
        raise LookupError("$any has no sample")
    if isinstance(value, dict):
        return {key: instances(item, choice) for key, item in value.items()}
    if isinstance(value, list):
        return [instances(item, choice) for item in value]
    return value


def expected_ir(case: Case) -> Iterator[tuple[str, str, JsonValue]]:
    """(where, IR definition, expected value) for every expected value that is an IR shape."""
    shapes = {"make_text": "TextContent", "make_user_message": "UserMessage", "make_assistant_message": "AssistantMessage"}
    if case.operation in shapes and case.expect:
        yield "expect.value", shapes[case.operation], case.expect["value"]
    if case.operation == "current_system_message" and case.expect and case.expect.get("value") is not None:
        yield "expect.value", "SystemMessage", case.expect["value"]
    model_events = case.operation == "scripted_model" or case.input.get("kind") == "assistant"
    for index, step in enumerate(case.steps):
        expect = step.get("expect")
        if not isinstance(expect, dict):
            continue
        events = expect.get("events")
        if model_events and events is not None:
            yield f"steps[{index}].events", "ModelEventList", events
        if model_events and expect.get("state") == "resolved" and "value" in expect:
            yield f"steps[{index}].value", "AssistantMessage", expect["value"]
        requests = expect.get("requests")
        for request_index, request in enumerate(requests if isinstance(requests, list) else []):
            yield f"steps[{index}].requests[{request_index}]", "AgentContext", request


def all_expected_ir(suite: Suite) -> list[tuple[str, str, str, JsonValue]]:
    return [(case.id, where, shape, value) for case in suite.cases for where, shape, value in expected_ir(case)]


def test_expected_ir_values_are_valid_ir(suite: Suite) -> None:
    problems = []
    checked = 0
    for case_id, where, shape, value in all_expected_ir(suite):
        for choice in range(3):
            concrete = instances(value, choice)
            items = concrete if shape == "ModelEventList" and isinstance(concrete, list) else [concrete]
            definition = "ModelEvent" if shape == "ModelEventList" else shape
            for item in items:
                error = next(iter(validator("ir.schema.json", f"/$defs/{definition}").iter_errors(item)), None)
                checked += 1
                if error is not None:
                    problems.append(f"{case_id}: {where}: {error.message}")
    assert checked > 500
    assert problems == []


@pytest.mark.parametrize("operation", ["text_of", "current_system_message", "event_stream", "scripted_model"])
def test_every_operation_family_is_present(suite: Suite, operation: str) -> None:
    assert any(case.operation == operation for case in suite.cases)
