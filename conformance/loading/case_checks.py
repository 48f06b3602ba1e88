"""Checks of a fixture's values that its JSON Schema cannot express.

Values JSON cannot carry (dates, NaN, non-string keys), clause ids missing from the profile's
registry, the shapes of expected events and inputs, and a scenario's steps that use a call
before a stream step creates it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

from conformance.common.jsontypes import JsonObject
from conformance.loading import pi_ai_shapes
from conformance.model.clauses import Clause
from conformance.model.profiles import DEFAULT_PROFILE, PI_AI_1, get_profile

#: Problems found, each as (path inside the checked value, message).
Found = list[tuple[list[str | int], str]]


def non_json_values(value: object, where: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    """Values YAML can produce that JSON cannot carry (dates, non-string keys, NaN)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield where, f"key {key!r} is not a string (quote it)"
            else:
                yield from non_json_values(item, [*where, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from non_json_values(item, [*where, index])
    elif isinstance(value, float) and not math.isfinite(value):
        yield where, f"{value} is not a JSON number"
    elif value is not None and not isinstance(value, bool | int | float | str):
        yield where, f"{value!r} is a YAML {type(value).__name__}, not a JSON value (quote it)"


def semantic_problems(raw: JsonObject, clauses: Mapping[str, Clause], check_shapes: bool, profile: str = DEFAULT_PROFILE) -> Found:
    """Checks a schema cannot express: clause registry, event shapes, scenario consistency.

    ``check_shapes`` is False for a file that passed these same schemas before (the shape
    checks depend only on the file and the schemas; the clause registry can change).
    """
    from conformance.loading import expected_keys

    spec = get_profile(profile).spec
    problems: Found = [
        (["clauses", index], f"unknown clause id {clause!r} (not in {spec})")
        for index, clause in enumerate(raw.get("clauses", []))  # type: ignore[arg-type]
        if isinstance(clause, str) and clause not in clauses
    ]
    operation = raw.get("operation")
    if operation not in get_profile(profile).operations:
        return problems
    if check_shapes and profile == DEFAULT_PROFILE:  # the course IR's shapes; another profile has its own
        problems.extend((list(where), message) for where, message in expected_keys.expectation_problems(raw))
    if check_shapes and profile == PI_AI_1.name:  # upstream's types: a strict port can take every input
        problems.extend((list(where), message) for where, message in pi_ai_shapes.input_problems(raw))
        problems.extend((list(where), message) for where, message in pi_ai_shapes.expectation_problems(raw))
    if operation in get_profile(profile).scenario_operations:
        # The course's event shapes (ir.schema.json) do not apply to another profile's events.
        problems.extend(_scenario_problems(raw, check_shapes and profile == DEFAULT_PROFILE))
    return problems


def _scenario_problems(raw: JsonObject, check_shapes: bool) -> Found:
    from conformance.loading import quick_schema, schema_errors

    problems: Found = []
    steps = raw.get("steps")
    if not isinstance(steps, list) or not steps:
        return [(["steps"], "a scenario needs at least one step")]
    input_value = raw.get("input")
    assistant_kind = check_shapes and isinstance(input_value, dict) and input_value.get("kind") == "assistant"
    streamed: set[str] = set()
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        action = step.get("action")
        if raw.get("operation") == "event_stream" and action == "push" and assistant_kind:
            errors = list(quick_schema.errors("ir.schema.json", step.get("event"), "/$defs/ModelEvent"))
            if errors:
                inner, reason = schema_errors.describe_best(errors)
                problems.append((["steps", index, "event", *inner], f"not a model event: {reason}"))
        call = step.get("call")
        if action == "stream" and isinstance(call, str):
            if call in streamed:
                problems.append((["steps", index, "call"], f"call {call!r} is already streamed; use a new name"))
            streamed.add(call)
        elif isinstance(call, str) and call not in streamed:
            problems.append((["steps", index, "call"], f"call {call!r} is used before a stream step creates it"))
    return problems


def own_check_paths(data: object, profile: str) -> Iterator[list[str | int]]:
    """Where the schema describes a value (for editors) that :func:`semantic_problems` checks in plainer words.

    The course's pushed model events (ir.schema.json), and for pi-ai-1 every upstream input
    (:func:`conformance.loading.pi_ai_shapes.input_paths`): a schema error there is left to that
    check, which runs once the case has no other problem.
    """
    cases = data.get("cases") if isinstance(data, dict) else None
    for index, raw in enumerate(cases if isinstance(cases, list) else []):
        if not isinstance(raw, dict):
            continue
        if profile == PI_AI_1.name:
            for where in pi_ai_shapes.input_paths(raw):
                yield ["cases", index, *where]
        elif profile == DEFAULT_PROFILE and raw.get("operation") == "event_stream" and _assistant_kind(raw):
            steps = raw.get("steps")
            for position, step in enumerate(steps if isinstance(steps, list) else []):
                if isinstance(step, dict) and step.get("action") == "push":
                    yield ["cases", index, "steps", position, "event"]


def _assistant_kind(raw: JsonObject) -> bool:
    input_value = raw.get("input")
    return isinstance(input_value, dict) and input_value.get("kind") == "assistant"
