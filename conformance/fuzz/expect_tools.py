"""Labs, clauses and loosened expectations of chapter 06's drawn programs (:mod:`.strategies_tools`).

A case's clauses are those its input exercises: the validators its shape holds, the registry
actions its steps take, the outcome its call was drawn for (the strategies tag each).
"""

from __future__ import annotations

import re
from typing import cast

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program
from conformance.fuzz.strategies_tools import REGISTRY_CLAUSES, VALIDATOR_CLAUSES

TOOL_LABS = {"object_schema": "6.1", "tool_registry": "6.2", "execute_tool_call": "6.3"}
_STEP = re.compile(r"^steps\[(\d+)\]")
_PARSE_CLAUSES = {"none": "TOOL-SCHEMA-1", "valid": "TOOL-SCHEMA-3", "invalid": "TOOL-SCHEMA-4", "not-object": "TOOL-SCHEMA-2"}
_OUTCOME_CLAUSES = {
    "success": ["TOOL-EXEC-6", "TOOL-EXEC-7"],
    "missing": ["TOOL-EXEC-3", "TOOL-EXEC-2"],
    "invalid": ["TOOL-EXEC-4", "TOOL-EXEC-2"],
    "throws": ["TOOL-EXEC-5", "TOOL-EXEC-2", "TOOL-EXEC-6"],
}


def _tag(program: Program, prefix: str) -> str:
    return next(tag.removeprefix(prefix) for tag in sorted(program.tags) if tag.startswith(prefix))


def _validator_clauses(program: Program) -> list[str]:
    return [VALIDATOR_CLAUSES[tag.removeprefix("validator:")] for tag in sorted(program.tags) if tag.startswith("validator:")]


def object_schema_clauses(program: Program, path: str) -> list[str]:
    """TOOL-SCHEMA-1 for the JSON Schema, 2 to 5 for what ``parse`` was given, the shape's validators' clauses."""
    kind = _tag(program, "parse:")
    if path.startswith("json_schema") or kind == "none":
        head = ["TOOL-SCHEMA-1"]
    elif kind in {"invalid", "not-object"} and path.startswith(("value", "keys", "error")):
        head = [_PARSE_CLAUSES[kind]]  # parse threw: its message, no result
    elif path.startswith("input_unchanged"):
        head = ["TOOL-SCHEMA-5"]
    elif path.startswith(("value", "keys")):
        head = ["TOOL-SCHEMA-3"]
    else:
        head = [_PARSE_CLAUSES[kind]]
    # A non-object is rejected before any validator runs (TOOL-SCHEMA-2).
    validators = [] if kind == "not-object" and not path.startswith("json_schema") else _validator_clauses(program)
    return list(dict.fromkeys([*head, *validators]))


def tool_registry_clauses(program: Program, path: str) -> list[str]:
    """The clause of the step at ``path`` (TOOL-REG-1 for the case as a whole)."""
    match = _STEP.match(path)
    if match is None or int(match.group(1)) >= len(program.steps):
        return ["TOOL-REG-1"]
    step = program.steps[int(match.group(1))]
    action = str(step["action"])
    clauses = [REGISTRY_CLAUSES[action]]
    labels = step.get("tools")
    if action == "construct" and isinstance(labels, list) and _names_repeat(program, labels):
        clauses.append("TOOL-REG-2")  # an initial list naming one tool twice throws as register does
    if action == "definitions":
        clauses.append("TOOL-REG-4")  # one definition per tool in list() order (TOOL-REG-5)
        if "shape-schema" in program.tags:
            clauses.append("TOOL-SCHEMA-1")
    return clauses


def _names_repeat(program: Program, labels: list[JsonValue]) -> bool:
    tools = program.input["tools"]
    assert isinstance(tools, dict)
    names = [str(cast(JsonObject, tools[str(label)])["name"]) for label in labels]
    return len(set(names)) < len(names)


def execute_tool_call_clauses(program: Program, path: str) -> list[str]:
    """TOOL-EXEC-1 (pairing) and the clauses of the outcome the call was drawn for."""
    outcome = _OUTCOME_CLAUSES[_tag(program, "outcome:")]
    if path.startswith(("received", "progress")) and "TOOL-EXEC-6" in outcome:
        outcome = ["TOOL-EXEC-6", *[clause for clause in outcome if clause != "TOOL-EXEC-6"]]
    # The call's arguments went through the tool's objectSchema parse: its clauses too.
    parse = next((tag.removeprefix("parse:") for tag in program.tags if tag.startswith("parse:")), None)
    schema = [_PARSE_CLAUSES[parse], *_validator_clauses(program)] if parse is not None else []
    return list(dict.fromkeys([*outcome, *schema, "TOOL-EXEC-1"]))


TOOL_CLAUSES = {
    "object_schema": object_schema_clauses,
    "tool_registry": tool_registry_clauses,
    "execute_tool_call": execute_tool_call_clauses,
}


def loosen_tool_observation(program: Program, observation: JsonObject) -> None:
    """TOOL-EXEC-1: the result's ``timestamp`` is the implementation's choice, a number."""
    result = observation.get("result")
    if program.operation == "execute_tool_call" and isinstance(result, dict) and "timestamp" in result:
        result["timestamp"] = {"$type": "number"}
