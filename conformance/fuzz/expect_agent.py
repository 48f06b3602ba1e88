"""Labs, clauses and loosened expectations of chapters 07 and 09's drawn programs (:mod:`.strategies_loop`, :mod:`.strategies_reducer`).

A ``run_agent_loop`` case's lab is the branch its program was drawn for (tag ``lab:N.N``);
its clauses are those of what the branch exercises (``skip:length``, ``limit:max-steps``)
and of the place of each expected value (``requests``: LOOP-REQ-1, ``events[4].content``:
LOOP-TOOL-2). A ``reduce_agent_state`` case cites the clause of its event's kind, or
AGENT-STATE-4 when the reducer must ignore the event.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program
from conformance.fuzz.strategies_reducer import EVENT_CLAUSES
from conformance.judging.matcher import escape_keys

AGENT_OPERATIONS = frozenset({"run_agent_loop", "reduce_agent_state"})
_TIMESTAMP: JsonValue = {"$type": "number"}
_MADE_BY_THE_RUN = frozenset({"assistant", "toolResult"})


def _unique(clauses: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(clauses))


def _tag(program: Program, prefix: str) -> str | None:
    return next((tag.removeprefix(prefix) for tag in sorted(program.tags) if tag.startswith(prefix)), None)


def agent_lab(program: Program) -> str:
    """7.1 to 7.5 as drawn, 9.1 for the reducer."""
    return "9.1" if program.operation == "reduce_agent_state" else str(_tag(program, "lab:"))


# -- run_agent_loop --------------------------------------------------------------------------

_SKIP_CLAUSES = {
    "length": "LOOP-SKIP-1",
    "error": "LOOP-SKIP-1",
    "aborted": "LOOP-SKIP-1",
    "unexpected-stop": "LOOP-SKIP-2",
    "tooluse-without-call": "LOOP-SKIP-3",
}
_LIMIT_CLAUSES = {
    "pre-aborted": ["LOOP-ABORT-1"],
    "abort-in-tool": ["LOOP-ABORT-2"],
    "abort-while-waiting": ["LOOP-ABORT-2", "LOOP-ABORT-1"],
    "abort-while-streaming": ["LOOP-ABORT-3", "LOOP-SKIP-1"],
    "max-steps": ["LOOP-LIMIT-1"],
}
#: The clause of each field of an event (``events[3].content``: a tool_progress's).
_EVENT_FIELDS = {
    "event": "LOOP-TURN-1",
    "message": "LOOP-TURN-1",
    "call": "LOOP-TOOL-1",
    "callId": "LOOP-TOOL-2",
    "content": "LOOP-TOOL-2",
    "reason": "LOOP-END-2",
}
_EVENT = re.compile(r"^events\[\d+\]\.(\w+)")


def _branch_clauses(program: Program) -> list[str]:
    """What the program's branch is about, most specific first."""
    lab = _tag(program, "lab:")
    if lab == "7.1":
        return (
            ["LOOP-TURN-2", "LOOP-REQ-1"] if "stream-throws" in program.tags else ["LOOP-END-1", "LOOP-TURN-1", "LOOP-END-2", "LOOP-REQ-1"]
        )
    if lab == "7.2":
        return ["LOOP-TOOL-1", "LOOP-TOOL-3", "LOOP-TOOL-2", *(["LOOP-SYS-1"] if "system" in program.tags else [])]
    if lab == "7.3":
        return [_SKIP_CLAUSES[str(_tag(program, "skip:"))], "LOOP-END-2"]
    if lab == "7.4":
        return ["LOOP-BATCH-1", "LOOP-BATCH-2", *(["LOOP-BATCH-3"] if {"executor", "throws"} <= program.tags else [])]
    # A maxSteps beside the signal: the signal read after the batch wins over the limit.
    limit = ["LOOP-LIMIT-1"] if "max-steps" in program.tags else []
    return _unique([*_LIMIT_CLAUSES[str(_tag(program, "limit:"))], *limit, "LOOP-END-2"])


def loop_clauses(program: Program, path: str) -> list[str]:
    """The clauses a divergence at ``path`` breaks: the value's own first, then the branch's."""
    head: list[str] = []
    if path.startswith(("context_unchanged", "fresh_messages")):
        head = ["LOOP-ISO-1"]
    elif path.startswith("requests"):
        head = ["LOOP-REQ-1", *(["LOOP-SYS-1"] if "system" in program.tags else [])]
    elif path.startswith("received"):
        head = ["LOOP-TOOL-1"]
    elif path.startswith("error") and "stream-throws" in program.tags:
        head = ["LOOP-TURN-2"]
    elif path.startswith("result.messages") and "system" in program.tags:
        head = ["LOOP-SYS-1"]
    elif (match := _EVENT.match(path)) is not None and match.group(1) in _EVENT_FIELDS:
        head = [_EVENT_FIELDS[match.group(1)]]
    return _unique([*head, *_branch_clauses(program)])


def _given_timestamps(value: JsonValue, found: set[object]) -> set[object]:
    if isinstance(value, dict):
        if "timestamp" in value:
            found.add(value["timestamp"])
        for item in value.values():
            _given_timestamps(item, found)
    elif isinstance(value, list):
        for item in value:
            _given_timestamps(item, found)
    return found


def _loosen_made_timestamps(value: JsonValue, given: set[object]) -> None:
    """Every message timestamp in ``value`` that the input did not give becomes ``{$type: number}``."""
    if isinstance(value, dict):
        if value.get("role") in _MADE_BY_THE_RUN and "timestamp" in value and value["timestamp"] not in given:
            value["timestamp"] = _TIMESTAMP
        for item in value.values():
            _loosen_made_timestamps(item, given)
    elif isinstance(value, list):
        for item in value:
            _loosen_made_timestamps(item, given)


#: What only lab 7.1's cases expect: whether the caller's context is left alone (LOOP-ISO-1).
_ISOLATION_KEYS = ("context_unchanged", "fresh_messages")


def loosen_loop_observation(program: Program, observation: JsonObject) -> None:
    """The timestamps the loop, chapter 06's executor or the model's abort made (section 10: implementation-defined).

    The drawn timestamps are small numbers and the clock's are not, so a timestamp that the
    input does not hold was made during the run. Outside lab 7.1 the case leaves out what only
    LOOP-ISO-1 says: a loop that writes into the caller's transcript then loses lab 7.1's
    points, not every chapter 07 lab's.
    """
    _loosen_made_timestamps(observation, _given_timestamps(program.input, set()))
    if _tag(program, "lab:") != "7.1":
        for key in _ISOLATION_KEYS:
            observation.pop(key, None)


# -- reduce_agent_state ----------------------------------------------------------------------


def reducer_clauses(program: Program, path: str) -> list[str]:
    """AGENT-STATE-4 for an ignored event, else its kind's; AGENT-STATE-1 and 3 first for the values they are about."""
    kind = str(_tag(program, "event:"))
    main = "AGENT-STATE-4" if "ignored" in program.tags else EVENT_CLAUSES[kind]
    head = {"input_unchanged": ["AGENT-STATE-1"], "messages_detached": ["AGENT-STATE-3"]}.get(path.split(".")[0], [])
    return _unique([*head, main])


def loosen_reducer_observation(program: Program, observation: JsonObject) -> None:
    """Leave out what the spec does not decide for this event.

    ``messages_detached`` only where the state is a run's new one (AGENT-STATE-3: run_start, and
    run_end of the active run); ``same_object`` not for a loop event of the active run that
    changes nothing (AGENT-STATE-7: the very state or an equal one).
    """
    kind = _tag(program, "event:")
    ignored = "ignored" in program.tags
    if ignored or kind not in ("run_start", "run_end"):
        observation.pop("messages_detached", None)
    # The observation's keys are escaped already ($O is $$O): compare like with like.
    if not ignored and kind not in ("run_start", "run_end") and observation.get("value") == escape_keys(program.input["state"]):
        observation.pop("same_object", None)


AGENT_CLAUSES = {"run_agent_loop": loop_clauses, "reduce_agent_state": reducer_clauses}


def loosen_agent_observation(program: Program, observation: JsonObject) -> None:
    """The loosening of ``program``'s operation."""
    if program.operation == "run_agent_loop":
        loosen_loop_observation(program, observation)
    else:
        loosen_reducer_observation(program, observation)
