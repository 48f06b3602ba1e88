"""Observation keys the harness derives itself, from what the adapter observed and the case's own input.

An adapter reports what only it can see (the events a consumer received). What follows from
that and the case is computed here, once, for every transport, so that no adapter has to
compute it and no two compute it differently. :func:`derive` runs on every observation
before it is judged.

Derived today: pi-ai-1's ``abort_summary`` on a ``faux_provider`` ``consume`` step with
``abort_after`` (PA-FAUX-ABORT-3, ``spec/pi-ai-1/spec.md``): what is stable about a stream
aborted mid-way. An adapter that still sends its own has it replaced. And the course's
``run_agent_loop`` ``trace``: each loop event as one line (spec/fixture-format.md, "Scenarios"),
and ``run_agent``'s: each Agent event as one line (``conformance/model/traces.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.model.cases import Case
from conformance.model.profiles import PI_AI_1
from conformance.model.traces import agent_line, loop_line

#: The field of an assistant stream's terminal event that carries its message.
TERMINAL_FIELDS: Final = {"done": "message", "error": "error"}


def derive(case: Case, observation: JsonObject) -> JsonObject:
    """``observation`` with the keys the harness derives added (a new object; the adapter's is left as it was)."""
    if case.operation == "run_agent_loop" and isinstance(observation, dict) and isinstance(observation.get("events"), list):
        return {**observation, "trace": loop_trace(observation["events"])}  # type: ignore[arg-type]
    if case.operation == "run_agent" and isinstance(observation, dict) and isinstance(observation.get("events"), list):
        return {**observation, "trace": agent_trace(observation["events"])}  # type: ignore[arg-type]
    if case.profile != PI_AI_1.name or case.operation != "faux_provider" or not isinstance(observation, dict):
        return observation
    observed = observation.get("steps")
    if not isinstance(observed, list):
        return observation  # malformed: judging says so
    steps = list(observed)
    for index, script in _aborting_consumes(case.input, case.steps):
        step = steps[index] if index < len(steps) else None
        # A consume with no events observed (stream() threw: no stream to consume) has no summary.
        if isinstance(step, dict) and "events" in step:
            steps[index] = {**step, "abort_summary": abort_summary(step["events"], script)}
    return {**observation, "steps": steps}


def _aborting_consumes(input: JsonObject, steps: Sequence[JsonObject]) -> Iterator[tuple[int, JsonValue]]:
    """Each ``consume`` step with ``abort_after``, by index, with the scripted message its call plays.

    Mirrors the provider's queue of responses: each ``stream`` step takes the next one;
    ``set_responses`` replaces the queue and ``append_responses`` extends it.
    """
    queue = _scripts(input.get("responses", []))
    played: dict[str, JsonValue] = {}
    for index, step in enumerate(steps):
        action = step.get("action")
        if action == "stream":
            played[str(step.get("call"))] = queue.pop(0) if queue else None
        elif action == "set_responses":
            queue = _scripts(step.get("responses"))
        elif action == "append_responses":
            queue += _scripts(step.get("responses"))
        elif action == "consume" and "abort_after" in step:
            yield index, played.get(str(step.get("call")))


def _scripts(responses: JsonValue) -> list[JsonValue]:
    """The message each response plays: ``{message: M}`` and ``{factory: M}`` play M, a throwing factory nothing."""
    if not isinstance(responses, list):
        return []
    scripts: list[JsonValue] = []
    for response in responses:
        response = response if isinstance(response, dict) else {}
        scripts.append(response.get("message", response.get("factory")))
    return scripts


def abort_summary(events: JsonValue, script: JsonValue) -> JsonObject:
    """What is stable about a stream aborted mid-way (PA-FAUX-ABORT-3), from the events' JSON.

    The terminal event's shape, and whether every kept block is a prefix of the scripted block.
    """
    received = events if isinstance(events, list) else []
    last = received[-1] if received and isinstance(received[-1], dict) else {}
    message = last.get(TERMINAL_FIELDS.get(str(last.get("type")), "message"))
    message = message if isinstance(message, dict) else {}
    scripted = script.get("content") if isinstance(script, dict) else None
    scripted = scripted if isinstance(scripted, list) else []
    content = message.get("content")
    content = content if isinstance(content, list) else []
    return {
        "type": last.get("type"),
        "reason": last.get("reason"),
        "stop_reason": message.get("stopReason"),
        "error_message": message.get("errorMessage"),
        "content_is_prefix": len(content) <= len(scripted) and all(map(_kept_prefix, content, scripted)),
        "start_first": bool(received) and isinstance(received[0], dict) and received[0].get("type") == "start",
        "one_terminal": sum(isinstance(event, dict) and event.get("type") in TERMINAL_FIELDS for event in received) == 1,
    }


def _kept_prefix(kept: JsonValue, full: JsonValue) -> bool:
    """A kept block is the scripted one cut short: its text a prefix, a tool call's id and name the same."""
    if not isinstance(kept, dict) or not isinstance(full, dict) or kept.get("type") != full.get("type"):
        return False
    field = {"text": "text", "thinking": "thinking"}.get(str(kept.get("type")))
    if field is not None:
        text, whole = kept.get(field), full.get(field)
        return isinstance(text, str) and isinstance(whole, str) and whole.startswith(text)
    return kept.get("type") == "toolCall" and kept.get("id") == full.get("id") and kept.get("name") == full.get("name")


def loop_trace(events: Sequence[JsonValue]) -> list[JsonValue]:
    """The loop events as lines ``TYPE:NAME``: ``model_event:start``, ``tool_end:fast-call``, ``turn_end:stop``."""
    return [loop_line(event) for event in events]


def agent_trace(events: Sequence[JsonValue]) -> list[JsonValue]:
    """The Agent's events as lines: ``run_start:1``, ``loop:1:turn_end:stop``, ``run_end:1:stop``."""
    return [agent_line(event) for event in events]
