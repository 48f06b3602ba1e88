"""Labs, clauses and loosened expectations of chapter 05's drawn programs (:mod:`.strategies_provider`, :mod:`.strategies_sse`).

A case's clauses are those its input exercises, read from the tags its strategy gave it (the
message kinds of a transcript, the chunks of a transport, the outcome a fetch was drawn for)
and from the place of each expected value (``steps[3].events[2].contentIndex``: PROV-MODEL-3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import cast

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program

PROVIDER_LABS = {"to_provider_messages": "5.1", "to_provider_tools": "5.1", "provider_model_stream": "5.2", "provider_fetch_stream": "5.3"}
_TIMESTAMP: JsonValue = {"$type": "number"}


def _unique(clauses: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(clauses))


def wire_clauses(tags: set[str]) -> list[str]:
    """PROV-MSG-1 and 6 (the list as a whole), and the clause of each message kind the transcript holds."""
    kinds = [("role:user", "PROV-MSG-2"), ("role:assistant", "PROV-MSG-3"), ("tool-calls", "PROV-MSG-4"), ("role:toolResult", "PROV-MSG-5")]
    return ["PROV-MSG-1", *[clause for tag, clause in kinds if tag in tags], "PROV-MSG-6"]


def to_provider_messages_clauses(program: Program, path: str) -> list[str]:
    """The transcript's clauses; PROV-MSG-6 first for ``input_unchanged``."""
    head = ["PROV-MSG-6"] if path.startswith("input_unchanged") else []
    return _unique([*head, *wire_clauses(program.tags)])


def to_provider_tools_clauses(program: Program, path: str) -> list[str]:
    """PROV-TOOLS-1, which says all of it."""
    return ["PROV-TOOLS-1"]


# -- lab 5.2 --------------------------------------------------------------------------------------

_MODEL_PATHS = [
    (r"\.requests", ["PROV-MODEL-1"]),
    (r"\.contentIndex$", ["PROV-MODEL-3"]),
    (r"\.toolCall", ["PROV-MODEL-7"]),
    (r"\.usage", ["PROV-MODEL-9"]),
    (r"\.errorMessage$", ["PROV-MODEL-11"]),
    (r"\.partial", ["PROV-MODEL-5"]),
    (r"\.(reason|stopReason)$", ["PROV-MODEL-6"]),
    (r"\.(delta|arguments|rawArguments|id|name)$", ["PROV-MODEL-4"]),
]


def model_chunks_of(program: Program) -> list[JsonObject]:
    """Every chunk the program's transport holds (fixed chunks, or a script's ``chunk`` actions)."""
    transport = cast(JsonObject, program.input["transport"])
    if "chunks" in transport:
        return cast(list[JsonObject], transport["chunks"])
    return [cast(JsonObject, action["chunk"]) for action in cast(list[JsonObject], transport["script"]) if "chunk" in action]


def provider_model_clauses(program: Program, path: str) -> list[str]:
    """The clause of the expected value's place, then those of what the transport and the steps hold."""
    head = next((clauses for pattern, clauses in _MODEL_PATHS if re.search(pattern, path)), [])
    tags = program.tags
    chunks = model_chunks_of(program)
    reasons = [chunk["reason"] for chunk in chunks if chunk["type"] == "finish"]
    # How the call ends first (most specific), then what its chunks exercise on the way.
    clauses = [clause for tag, clause in (("aborted", "PROV-MODEL-12"), ("no-finish", "PROV-MODEL-10")) if tag in tags]
    if "not-json" in tags and reasons and reasons[-1] == "tool_calls":
        clauses.append("PROV-MODEL-8")
    if tags & {"thrown", "aborted", "no-finish", "not-json"}:
        clauses.append("PROV-MODEL-11")
    clauses.append("PROV-MODEL-2")
    if "text" in tags or "tool" in tags:
        clauses += ["PROV-MODEL-3", "PROV-MODEL-5"]
    if "tool" in tags:
        clauses += ["PROV-MODEL-4", "PROV-MODEL-7"]
    if reasons:
        clauses += ["PROV-MODEL-6", "PROV-MODEL-9"]
    if "requests" in tags:  # the request is the wire conversion of the step's context (PROV-MODEL-1)
        clauses += ["PROV-MODEL-1", *wire_clauses(tags), *(["PROV-TOOLS-1"] if "context-tools" in tags else [])]
    return _unique([*head, *clauses])


# -- lab 5.3 --------------------------------------------------------------------------------------

_SSE_PATHS = [
    (r"\.requests\[\d+\]\.url$", ["PROV-HTTP-1"]),
    (r"\.requests", ["PROV-HTTP-2"]),
    (r"\.chunks", ["PROV-SSE-3"]),
]
#: What each outcome a fetch was drawn for exercises.
_SSE_OUTCOMES = {
    "ends": ["PROV-SSE-3", "PROV-SSE-1", "PROV-SSE-2"],
    "framing": ["PROV-SSE-1", "PROV-SSE-3", "PROV-SSE-2"],
    "invalid": ["PROV-SSE-2", "PROV-KEY-1", "PROV-SSE-1", "PROV-SSE-3"],
    "order": ["PROV-SSE-4", "PROV-KEY-1", "PROV-SSE-1", "PROV-SSE-2", "PROV-SSE-3"],
    "rejects": ["PROV-KEY-1"],
    "status": ["PROV-HTTP-3", "PROV-KEY-1"],
    "abort": ["PROV-SSE-5", "PROV-SSE-1", "PROV-SSE-2", "PROV-SSE-3"],
    "pre-aborted": ["PROV-HTTP-3", "PROV-SSE-5"],
    "base-url": ["PROV-HTTP-1"],
}


def provider_fetch_clauses(program: Program, path: str) -> list[str]:
    """The clause of the expected value's place, then those of the outcome the fetch was drawn for."""
    head = next((clauses for pattern, clauses in _SSE_PATHS if re.search(pattern, path)), [])
    outcome = next(tag.removeprefix("outcome:") for tag in sorted(program.tags) if tag.startswith("outcome:"))
    clauses = list(_SSE_OUTCOMES[outcome])
    if "finish-order" in program.tags:
        clauses.append("PROV-SSE-4")  # the same finish reason twice is accepted
    if "requests" in program.tags:
        clauses += ["PROV-HTTP-1", "PROV-HTTP-2"]
    return _unique([*head, *clauses])


PROVIDER_CLAUSES = {
    "to_provider_messages": to_provider_messages_clauses,
    "to_provider_tools": to_provider_tools_clauses,
    "provider_model_stream": provider_model_clauses,
    "provider_fetch_stream": provider_fetch_clauses,
}


def loosen_provider_step(program: Program, expected: JsonObject) -> JsonObject:
    """A model step's expectations with every assistant message's ``timestamp`` a matcher.

    ``same_object_as`` of ``result`` is left out: that ``result()`` is the very terminal message
    is AMS-2 (lab 3.2), which lab 3.2's cases check; chapter 05's public cases do not either.
    """
    if program.operation != "provider_model_stream":
        return expected
    loosened = cast(JsonObject, _loose_timestamps(expected))
    loosened.pop("same_object_as", None)
    return loosened


def _loose_timestamps(value: JsonValue) -> JsonValue:
    if isinstance(value, list):
        return [_loose_timestamps(item) for item in value]
    if not isinstance(value, dict):
        return value
    result = {key: _loose_timestamps(item) for key, item in value.items()}
    if result.get("role") == "assistant" and "timestamp" in result:
        result["timestamp"] = _TIMESTAMP
    return result
