"""Hypothesis strategies for chapter 06's tool contract: ``object_schema``, ``tool_registry``, ``execute_tool_call``.

Inputs stay inside spec/spec.md section 9 and the scripted-tool vocabulary of
spec/fixture-format.md ("The tool contract"). Left out on purpose, because the spec leaves
them open or out of scope: shape keys that are integer-like (JavaScript orders them first) or
``__proto__``; a thrown non-``Error`` and a ``details`` that is present but undefined (values
only JavaScript has); integers beyond 2**53. The result's ``timestamp`` is implementation-defined
(TOOL-EXEC-1): :mod:`conformance.fuzz.expect` makes it a matcher.

``execute_tool_call`` programs draw their outcome first (a missing tool, arguments that fail to
parse, a tool that throws, a success) and then arguments that lead to it, so that the tags,
hence the case's clauses, say what the input exercises without running anything.
"""

from __future__ import annotations

from typing import cast

from hypothesis import strategies as st

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program, json_values, keys, texts

VALIDATORS = ("string", "optional_string", "optional_positive_integer")
#: The clause of each validator (TOOL-VAL-1 to 3).
VALIDATOR_CLAUSES = {"string": "TOOL-VAL-1", "optional_string": "TOOL-VAL-2", "optional_positive_integer": "TOOL-VAL-3"}
SAFE_INTEGER = 2**53
one_in_four = st.integers(0, 3).map(lambda n: n == 0)

shape_keys = st.sampled_from(["value", "label", "limit", "路径"]) | keys.filter(lambda key: not (key.isascii() and key.isdigit()))
shapes = st.dictionaries(shape_keys, st.sampled_from(VALIDATORS), max_size=4)
text_blocks = st.lists(st.builds(lambda text: {"type": "text", "text": text}, texts), max_size=2)
#: Values each validator rejects (TOOL-VAL-1 to 3): JSON null is a value, never absent.
#: null and 0 are drawn often: they are the values a port most often takes for "absent".
not_strings = st.one_of(st.none(), st.none(), st.booleans(), st.integers(-9, 9), st.lists(texts, max_size=1))
not_positive_integers = st.one_of(
    st.none(),
    st.just(0),
    st.booleans(),
    st.sampled_from([0, -1]),
    st.integers(-SAFE_INTEGER, 0),
    st.sampled_from([1.5, 0.5, -2.5]),
    st.sampled_from(["2", "1", ""]),
)
positive_integers = st.integers(1, SAFE_INTEGER)
not_objects = st.one_of(st.none(), st.booleans(), st.integers(-9, 9), texts, st.lists(json_values, max_size=2))


def _valid_value(draw: st.DrawFn, validator: str) -> JsonValue | None:
    """A value ``validator`` accepts; None stands for "leave the key out" (optional validators only)."""
    if validator != "string" and draw(st.booleans()):
        return None
    return draw(texts) if validator != "optional_positive_integer" else draw(positive_integers)


def _invalid_value(draw: st.DrawFn, validator: str) -> JsonValue:
    value: JsonValue = draw(not_positive_integers if validator == "optional_positive_integer" else not_strings)
    return value


@st.composite
def arguments_for(draw: st.DrawFn, shape: dict[str, str], valid: bool, tags: set[str] | None = None) -> JsonObject:
    """An arguments object for ``shape``: every key valid, or (``valid`` False) one key invalid; maybe undeclared keys too.

    ``tags`` gets ``validator:NAME`` for each validator that sees a value (TOOL-VAL-1 to 3).
    """
    arguments: JsonObject = {}
    # Sometimes several invalid keys: the first in shape order decides the message (TOOL-SCHEMA-4).
    bad = set(draw(st.lists(st.sampled_from(sorted(shape)), min_size=1, max_size=3))) if not valid else set()
    first_bad = next((index for index, key in enumerate(shape) if key in bad), len(shape))
    for index, (key, validator) in enumerate(shape.items()):
        if tags is not None and index <= first_bad:
            tags.add(f"validator:{validator}")  # validators run in shape order up to the first that throws
        if key in bad:
            arguments[key] = _invalid_value(draw, validator)
            continue
        value = _valid_value(draw, validator)
        if value is not None:
            arguments[key] = value
    for extra in draw(st.lists(keys.filter(lambda key: key not in shape), max_size=2)):
        arguments[extra] = draw(json_values)  # TOOL-SCHEMA-3: dropped
    return arguments


@st.composite
def object_schema_program(draw: st.DrawFn) -> Program:
    """``objectSchema(shape)``: its JSON Schema, and maybe ``parse`` of a valid, an invalid or a non-object value."""
    shape = draw(shapes)
    program = Program("object_schema", {"shape": cast(JsonValue, shape)})
    program.tags.update(f"validator:{validator}" for validator in shape.values())
    kind = draw(st.sampled_from(["none", "valid", "valid", "invalid", "invalid", "not-object"]))
    if kind == "invalid" and not shape:
        kind = "valid"
    if kind == "not-object":
        program.input["value"] = draw(not_objects)
    elif kind != "none":
        program.input["value"] = draw(arguments_for(shape, valid=kind == "valid"))
    program.tags.add(f"parse:{kind}")
    return program


# -- scripted tools -----------------------------------------------------------------------------

tool_names = st.sampled_from(["echo", "upper", "Echo", "读"]) | texts
descriptions = st.sampled_from(["Echo one value", ""]) | texts
outputs = st.builds(
    lambda content, details, is_error: {
        "content": content,
        **({"details": details} if details != "absent" else {}),
        **({"isError": is_error} if is_error is not None else {}),
    },
    text_blocks,
    st.just("absent") | json_values,
    st.none() | st.booleans(),
)


@st.composite
def scripted_tool(draw: st.DrawFn, name: str, throws: bool = False, shape: dict[str, str] | None = None) -> JsonObject:
    """A scripted tool called ``name``: a shape schema (or opaque), progress reports, then a return or a throw."""
    if shape is None:
        shape = draw(shapes) if draw(st.integers(0, 2)) else None  # one tool in three opaque (TOOL-REG-5's default)
    schema: JsonObject = {"shape": cast(JsonValue, shape)} if shape is not None else {"opaque": True}
    script: list[JsonValue] = [{"progress": cast(JsonValue, draw(text_blocks))} for _ in range(draw(st.integers(0, 2)))]
    if throws:
        script.append({"throw": draw(texts)})
    elif draw(st.integers(0, 3)):
        script.append({"return": draw(outputs)})
    tool: JsonObject = {"name": name, "description": draw(descriptions), "schema": schema}
    if script:
        tool["script"] = script
    return tool


# -- tool_registry --------------------------------------------------------------------------------

LABELS = ("t1", "t2", "t3", "t4")
#: The clause each registry step checks (TOOL-REG-1 to 5).
REGISTRY_CLAUSES = {
    "construct": "TOOL-REG-1",
    "register": "TOOL-REG-2",
    "get": "TOOL-REG-3",
    "list": "TOOL-REG-4",
    "definitions": "TOOL-REG-5",
}


@st.composite
def tool_registry_program(draw: st.DrawFn) -> Program:
    """A registry built from some labelled tools (names often alike), then registrations and reads."""
    count = draw(st.integers(1, len(LABELS)))
    names = draw(st.lists(tool_names, min_size=count, max_size=count, unique=True))
    if count > 1 and draw(one_in_four):
        names[-1] = names[0]  # two tools of one name: the second registration throws (TOOL-REG-2)
    tools = {LABELS[index]: draw(scripted_tool(name)) for index, name in enumerate(names)}
    steps: list[JsonObject] = []
    construct: JsonObject = {"action": "construct"}
    if draw(st.integers(0, 3)):
        # Each label at most once, but for one list in four: the same tool object twice is a duplicate too.
        labels = st.lists(st.sampled_from(LABELS[:count]), max_size=3, unique=not draw(one_in_four))
        construct["tools"] = cast(JsonValue, draw(labels))
    steps.append(construct)
    initial = [names[LABELS.index(str(label))] for label in cast(list[JsonValue], construct.get("tools", []))]
    program = Program("tool_registry", {"tools": cast(JsonValue, tools)}, steps=steps)
    if any("shape" in cast(JsonObject, tool["schema"]) for tool in tools.values()):
        program.tags.add("shape-schema")
    if len(set(initial)) < len(initial):
        return program  # the constructor throws (TOOL-REG-1): there is no registry for later steps
    actions = st.sampled_from(["register", "get", "list", "definitions"])
    for _ in range(draw(st.integers(1, 5))):
        action = draw(actions)
        step: JsonObject = {"action": action}
        if action == "register":
            step["tool"] = draw(st.sampled_from(LABELS[:count]))
        elif action == "get":
            step["name"] = draw(st.sampled_from(names) | tool_names)
        steps.append(step)
    return program


# -- execute_tool_call ----------------------------------------------------------------------------

OUTCOMES = ("success", "missing", "invalid", "throws")


def execute_tool_call_programs() -> st.SearchStrategy[Program]:
    """Each outcome's programs as a branch of their own: Hypothesis mutates what it drew before,
    so one strategy that drew the outcome could go forty draws without a missing tool."""
    return st.one_of(*[execute_tool_call_program(outcome) for outcome in OUTCOMES])


@st.composite
def execute_tool_call_program(draw: st.DrawFn, outcome: str) -> Program:
    """One ``executeToolCall`` among one to three tools, for ``outcome`` (see the module's docstring)."""
    names = draw(st.lists(tool_names, min_size=1, max_size=3, unique=True))  # registered in one registry: unique
    target = draw(st.sampled_from(names))
    shape = draw(shapes.filter(bool)) if outcome == "invalid" else draw(shapes)
    tools = [
        draw(scripted_tool(name, throws=outcome == "throws", shape=shape)) if name == target else draw(scripted_tool(name))
        for name in names
    ]
    call_name = draw(tool_names.filter(lambda name: name not in names)) if outcome == "missing" else target
    tags = {f"outcome:{outcome}"}
    if outcome == "invalid" and draw(st.booleans()):
        arguments: JsonValue = draw(not_objects)  # TOOL-SCHEMA-2's failure
        tags.add("parse:not-object")
    elif outcome == "missing":
        arguments = draw(st.dictionaries(keys, json_values, max_size=2))
    else:
        arguments = draw(arguments_for(shape, valid=outcome != "invalid", tags=tags))
        tags.add("parse:invalid" if outcome == "invalid" else "parse:valid")
    call: JsonObject = {
        "type": "toolCall",
        "id": draw(st.sampled_from(["c1", "call_9"]) | texts),
        "name": call_name,
        "arguments": arguments,
    }
    program = Program("execute_tool_call", {"tools": cast(JsonValue, tools), "call": call})
    if draw(st.booleans()):
        context: JsonObject = {}
        for name in ("signal", "report_progress"):
            if draw(st.booleans()):
                context[name] = draw(st.booleans())
        program.input["context"] = context
    program.tags |= tags
    return program
