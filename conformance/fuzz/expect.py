"""Turn a drawn program and the reference's observation into a fixture case.

The expected values are the reference's observation, with every value the spec leaves
implementation-defined replaced by a matcher (a timestamp by ``{$type: number}``, say): a
case must never demand what the spec leaves open. The clauses come from the diverging path.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import re

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.expect_agent import AGENT_CLAUSES, agent_lab, loosen_agent_observation
from conformance.fuzz.expect_provider import PROVIDER_CLAUSES, PROVIDER_LABS, loosen_provider_step
from conformance.fuzz.expect_tools import TOOL_CLAUSES, TOOL_LABS, loosen_tool_observation
from conformance.fuzz.strategies import Program
from conformance.judging.matcher import escape_keys
from conformance.model.cases import Case
from conformance.model.profiles import COURSE

LOOSE_MESSAGE_FIELDS: dict[str, JsonValue] = {
    "provider": {"$type": "string"},
    "model": {"$type": "string"},
    "usage": {"$type": "object"},
    "timestamp": {"$type": "number"},
}
ASSISTANT_DEFAULTS = ("provider", "model", "usage", "timestamp")
#: Operations whose observation is one per step (the course profile's scenario operations).
SCENARIOS = COURSE.scenario_operations


def _loosen_messages(value: JsonValue) -> JsonValue:
    """Every assistant message inside ``value`` with its implementation-defined fields as matchers."""
    if isinstance(value, list):
        return [_loosen_messages(item) for item in value]
    if not isinstance(value, dict):
        return value
    result = {key: _loosen_messages(item) for key, item in value.items()}
    if result.get("role") == "assistant":
        for name, matcher in LOOSE_MESSAGE_FIELDS.items():
            if name in result:
                result[name] = matcher
    return result


def expectations(program: Program, observation: JsonObject) -> tuple[JsonObject | None, list[JsonObject]]:
    """``(expect, steps)`` of the case: the observation, loosened where the spec is open.

    Observed keys that start with ``$`` (a drawn tool argument ``$O``) are written as literals
    (``$$O``), or the loader would read them as misspelt matchers.
    """
    escaped = escape_keys(observation)
    assert isinstance(escaped, dict)
    observation = escaped
    if program.operation == "make_user_message":
        value = observation["value"]
        if isinstance(value, dict):
            value["timestamp"] = {"$type": "number"}  # IR-MAKE-2
        return observation, []
    if program.operation == "make_assistant_message":
        _loosen_defaults(program, observation["value"])
        return observation, []
    if program.operation in AGENT_CLAUSES:
        loosen_agent_observation(program, observation)
        return observation, []
    if program.operation in TOOL_CLAUSES:
        loosen_tool_observation(program, observation)
        if program.operation not in SCENARIOS:
            return observation, []
    if program.operation not in SCENARIOS:
        return observation, []
    observed_steps = observation.get("steps")
    assert isinstance(observed_steps, list)
    steps = [
        _expected_step(program, index, step, observed)
        for index, (step, observed) in enumerate(zip(program.steps, observed_steps, strict=True))
    ]
    return None, steps


def _loosen_defaults(program: Program, value: JsonValue) -> None:
    """IR-MAKE-3: the fields an assistant message was not given are implementation-defined defaults."""
    overrides = program.input.get("overrides")
    given = set(overrides) if isinstance(overrides, dict) else set()
    if isinstance(value, dict):
        for name in ASSISTANT_DEFAULTS:
            if name not in given and name in value:
                value[name] = LOOSE_MESSAGE_FIELDS[name]


def _expected_step(program: Program, index: int, step: JsonObject, observed: JsonValue) -> JsonObject:
    """A copy of step ``index`` that expects what was observed, loosened where the spec is open."""
    step = copy.deepcopy(step)
    if isinstance(observed, dict) and observed:
        expected: JsonObject = dict(observed)
        if index in program.loose_threw and "threw" in expected:
            expected["threw"] = {"$any": True}  # STREAM-4: ignored or thrown
        if step.get("call") in program.loose_calls:
            expected = _loosen_messages(expected)  # type: ignore[assignment]
        step["expect"] = loosen_provider_step(program, expected)
    return step


# -- clauses, lab, id ------------------------------------------------------------------------

_PURE_CLAUSES: dict[str, list[tuple[str, list[str]]]] = {
    "text_of": [(r"^input_unchanged", ["IR-TEXT-4"]), (r"", ["IR-TEXT-1", "IR-TEXT-2"])],
    "system_message_text": [(r"", ["SYS-TEXT-1"])],
    "current_system_message": [
        (r"^value\.timestamp", ["SYS-REPLAY-6"]),
        (r"^value\.content", ["SYS-REPLAY-2"]),
        (r"^(value\.sections|section_order)", ["SYS-REPLAY-3", "SYS-REPLAY-4", "SYS-REPLAY-5"]),
        (r"^input_unchanged", ["SYS-REPLAY-7"]),
        (r"", ["SYS-REPLAY-1", "SYS-REPLAY-7"]),
    ],
    "current_system_prompt": [(r"", ["SYS-PROMPT-1", "SYS-TEXT-1", "SYS-REPLAY-3", "SYS-REPLAY-4"])],
    "make_text": [(r"", ["IR-MAKE-1"])],
    "make_user_message": [(r"", ["IR-MAKE-2"])],
    "make_assistant_message": [(r"", ["IR-MAKE-3"])],
}
_STREAM_CLAUSES = [
    (r"\.same_object_as$", ["STREAM-2"]),
    (r"\.(state|value)", ["STREAM-2", "STREAM-6"]),
    (r"\.finished$", ["STREAM-3", "STREAM-5", "STREAM-6"]),
    (r"\.events", ["STREAM-1", "STREAM-4"]),
    (r"\.threw$", ["STREAM-5"]),
]
_MODEL_CLAUSES = [
    (r"\.requests", ["SM-REQ-1", "SM-REQ-2"]),
    (r"\.turns_unchanged$", ["SM-DONE-2"]),
    (r"\.threw$", ["SM-DEFER-1"]),
    (r"\.same_object_as$", ["SM-DONE-1", "AMS-2"]),
    (r"\.partial", ["SM-PLAY-2", "SM-PLAY-3"]),
    (r"\.toolCall", ["SM-TOOL-2"]),
    (r"\.delta$", ["SM-TOOL-1", "SM-JSON-1", "SM-TEXT-1"]),
    (r"", ["SM-PLAY-1", "SM-DONE-1"]),
]


def clauses_for(program: Program, path: str) -> list[str]:
    """The clauses a divergence at ``path`` breaks, most specific first."""
    if program.operation in AGENT_CLAUSES:
        return AGENT_CLAUSES[program.operation](program, path)
    if program.operation in TOOL_CLAUSES:
        return TOOL_CLAUSES[program.operation](program, path)
    if program.operation in PROVIDER_CLAUSES:
        return PROVIDER_CLAUSES[program.operation](program, path)
    if program.operation in _PURE_CLAUSES:
        table = _PURE_CLAUSES[program.operation]
        extra = ["IR-TEXT-3"] if program.operation == "text_of" and "system" in program.tags else []
        return next(clauses for pattern, clauses in table if re.search(pattern, path)) + extra
    if program.operation == "event_stream":
        clauses = next((clauses for pattern, clauses in _STREAM_CLAUSES if re.search(pattern, path)), ["STREAM-1"])
        if program.input.get("kind") == "assistant":
            clauses = [*clauses, "AMS-1", "AMS-2"]
        return clauses
    clauses = list(next(clauses for pattern, clauses in _MODEL_CLAUSES if re.search(pattern, path)))
    for tag, clause in (("aborted", "SM-ABORT-1"), ("exhausted", "SM-EXHAUST-1"), ("error-turn", "SM-ERR-2"), ("mutate", "SM-REQ-2")):
        if tag in program.tags and clause not in clauses:
            clauses.append(clause)
    if "aborted" in program.tags and "SM-DEFER-1" not in clauses:
        clauses.append("SM-DEFER-1")  # an abort is seen only because production is deferred
    return clauses


def lab_for(program: Program) -> str:
    """The lab whose code the case exercises (spec/fixture-format.md, ``lab``)."""
    if program.operation in AGENT_CLAUSES:
        return agent_lab(program)
    if program.operation in TOOL_LABS:
        return TOOL_LABS[program.operation]
    if program.operation in PROVIDER_LABS:
        return PROVIDER_LABS[program.operation]
    if program.operation == "event_stream":
        return "3.2"
    if program.operation == "scripted_model":
        return "4.2" if program.tags & {"aborted", "exhausted", "error-turn"} else "4.1"
    return "3.1"


def case_id(program: Program) -> str:
    """``<prefix>-fuzz-<hash of the input and steps>``: stable for the same program.

    The prefix is the one the bundled ids of the operation share (``sm``, ``text-of``), so
    the case can move into their file as it is (lint checks ids against their file's prefix).
    """
    digest = hashlib.sha256(
        json.dumps([program.operation, program.input, program.steps], sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    return f"{operation_prefix(program.operation)}-fuzz-{digest[:8]}"


@functools.cache
def operation_prefix(operation: str) -> str:
    """The words (two at most) every bundled course id of ``operation`` starts with; the operation's name otherwise."""
    from conformance.authoring.ids import shared_words
    from conformance.loading.loader import load_suite

    ids = [case.id for case in load_suite().cases if case.operation == operation]
    return "-".join(shared_words(ids)[:2]) or operation.replace("_", "-")


def build_case(program: Program, observation: JsonObject, path: str = "", description: str = "") -> Case:
    """The case for ``program``, its expectations taken from the reference's ``observation``."""
    expect, steps = expectations(program, observation)
    lab = lab_for(program)
    return Case(
        id=case_id(program),
        file="fuzz",
        line=0,
        chapter=f"0{lab.split('.')[0]}",
        lab=lab,
        clauses=tuple(clauses_for(program, path)),
        description=description or "found by pi-conformance fuzz",
        operation=program.operation,
        input=copy.deepcopy(program.input),
        expect=expect,
        steps=tuple(steps),
    )
