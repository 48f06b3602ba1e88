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
from conformance.running.derived import agent_trace

AGENT_OPERATIONS = frozenset({"run_agent_loop", "reduce_agent_state", "run_agent"})
_TIMESTAMP: JsonValue = {"$type": "number"}
_MADE_BY_THE_RUN = frozenset({"assistant", "toolResult"})


def _unique(clauses: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(clauses))


def _tag(program: Program, prefix: str) -> str | None:
    return next((tag.removeprefix(prefix) for tag in sorted(program.tags) if tag.startswith(prefix)), None)


def agent_lab(program: Program) -> str:
    """7.1 to 7.5 and 9.2 to 9.5 as drawn, 9.1 for the reducer."""
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


def _loosen_made_timestamps(value: JsonValue, given: set[object], roles: frozenset[str] | None = _MADE_BY_THE_RUN) -> None:
    """Every timestamp of a message of ``roles`` (None: any) in ``value`` that the input did not give becomes ``{$type: number}``."""
    if isinstance(value, dict):
        role = value.get("role")
        if role is not None and (roles is None or role in roles) and "timestamp" in value and value["timestamp"] not in given:
            value["timestamp"] = _TIMESTAMP
        for item in value.values():
            _loosen_made_timestamps(item, given, roles)
    elif isinstance(value, list):
        for item in value:
            _loosen_made_timestamps(item, given, roles)


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


# -- run_agent -------------------------------------------------------------------------------

#: What each kind of Agent scenario (:mod:`.strategies_agent`) is about, most specific first.
_KIND_CLAUSES = {
    "sequential": ["AGENT-RUN-3"],
    "busy": ["AGENT-RUN-4", "AGENT-RUN-3"],
    "model-throws": ["AGENT-LOOP-2", "AGENT-RUN-3"],
    "run-end-listener": ["AGENT-RUN-5", "AGENT-SUB-4", "AGENT-SUB-2"],
    "subscribers": ["AGENT-SUB-1"],
    "copies": ["AGENT-COPY-1"],
    "uncloneable": ["AGENT-LOOP-3"],
    "changed-later": ["AGENT-LOOP-4"],
    "queued-event": ["AGENT-SUB-4", "AGENT-SUB-2", "AGENT-RUN-5"],
    "abort-in-run-start": ["AGENT-ABORT-2", "AGENT-ABORT-1"],
    "abort-during-tool": ["AGENT-ABORT-3", "AGENT-ABORT-1"],
    "abort-ignored": ["AGENT-ABORT-4"],
    "abort-reaches-model": ["AGENT-ABORT-3"],
    "abort-while-idle": ["AGENT-ABORT-1"],
    "steer-during-batch": ["AGENT-QUEUE-2", "AGENT-LOOP-1"],
    "steer-at-text-stop": ["AGENT-QUEUE-3", "AGENT-LOOP-1"],
    "follow-ups": ["AGENT-QUEUE-3", "AGENT-LOOP-1"],
    "closed": ["AGENT-QUEUE-1"],
    "discarded": ["AGENT-QUEUE-4"],
}
#: What a tag adds: a constructor's system prompt, a patch, a third prompt, a snapshot or a throw in a subscriber ...
_TAG_CLAUSES = {
    "system-prompt": ["AGENT-RUN-1", "AGENT-RUN-2"],
    "patch": ["AGENT-RUN-6", "AGENT-RUN-2"],
    "third": ["AGENT-RUN-4"],
    "snapshot": ["AGENT-SUB-2"],
    "throw": ["AGENT-SUB-3"],
    "batch": ["AGENT-QUEUE-2"],
    "next": ["AGENT-ABORT-1"],
}


def run_agent_clauses(program: Program, path: str) -> list[str]:
    """The clauses of the scenario's kind and of what it drew besides, whatever the path: the scenario is about them."""
    kind = str(_tag(program, "kind:"))
    return _unique([*_KIND_CLAUSES[kind], *(clause for tag, clauses in _TAG_CLAUSES.items() if tag in program.tags for clause in clauses)])


#: The observation keys a case without a value in them does not expect (nothing the steps did shows there).
_VACUOUS_WHEN_EMPTY = ("deliveries", "actions", "snapshots", "received")


def loosen_run_agent_observation(program: Program, observation: JsonObject) -> None:
    """The events as their trace, made timestamps as matchers, and only what the scenario's lab is about.

    The trace (derived by the harness from the events) says which events came in which order;
    the messages they carry are in the prompts' results, the requests and the states, so the
    events themselves are not expected. Timestamps the Agent, the loop or chapter 06's executor
    made are implementation-defined (section 11.6, last paragraph); the constructor's system
    message's 0 is not (AGENT-RUN-1), and no clock gives 0. The signals' identities are lab
    9.4's (AGENT-ABORT-1): a case of another lab leaves them out, so that one controller for
    every run costs lab 9.4's points alone.
    """
    events = observation.pop("events")
    observation["trace"] = agent_trace(events if isinstance(events, list) else [])
    # Any role: the Agent makes user messages and system patches too.
    _loosen_made_timestamps(observation, _given_timestamps(program.input, {0}), roles=None)
    if _tag(program, "lab:") != "9.4":
        observation.pop("signals", None)
    for key in _VACUOUS_WHEN_EMPTY:
        if observation.get(key) in ({}, []):
            observation.pop(key)
    if not _has_system_option(program.input.get("steps")):
        observation.pop("prompt_options_unchanged", None)


def _has_system_option(steps: JsonValue) -> bool:
    """Whether a prompt step passes a ``system`` option (``prompt_options_unchanged`` is about those alone)."""
    prompts = [step.get("prompt") for step in steps if isinstance(step, dict)] if isinstance(steps, list) else []
    return any(isinstance(prompt, dict) and "system" in prompt for prompt in prompts)


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


AGENT_CLAUSES = {"run_agent_loop": loop_clauses, "reduce_agent_state": reducer_clauses, "run_agent": run_agent_clauses}


def loosen_agent_observation(program: Program, observation: JsonObject) -> None:
    """The loosening of ``program``'s operation."""
    if program.operation == "run_agent_loop":
        loosen_loop_observation(program, observation)
    elif program.operation == "run_agent":
        loosen_run_agent_observation(program, observation)
    else:
        loosen_reducer_observation(program, observation)
