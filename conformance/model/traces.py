"""Trace lines: one line per event of a loop or an Agent, the form cases expect (spec/fixture-format.md).

A loop event is ``TYPE:NAME`` (``model_event:start``, ``tool_end:fast-call``, ``turn_end:stop``);
an Agent event is ``run_start:RUN``, ``loop:RUN:TYPE:NAME`` (its loop event's line) or
``run_end:RUN:REASON``. The harness derives ``trace`` with these (``running/derived.py``), and an
adapter names the event a scripted subscriber reacted to with them, so both agree.
"""

from __future__ import annotations

from typing import Final

from conformance.common.jsontypes import JsonValue

#: What names a loop event in its trace line, by type: a path of fields into the event.
LOOP_TRACE_FIELDS: Final = {
    "model_event": ("event", "type"),
    "assistant_message": ("message", "stopReason"),
    "tool_start": ("call", "id"),
    "tool_progress": ("callId",),
    "tool_end": ("result", "toolCallId"),
    "tool_skipped": ("result", "toolCallId"),
    "turn_end": ("reason",),
}


def _path(value: JsonValue, keys: tuple[str, ...]) -> JsonValue:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def loop_line(event: JsonValue) -> str:
    """A loop event's line, ``TYPE:NAME`` (an unknown type: ``TYPE`` alone)."""
    kind = str(event.get("type")) if isinstance(event, dict) else "None"
    fields = LOOP_TRACE_FIELDS.get(kind)
    return f"{kind}:{_path(event, fields)}" if fields is not None else kind


def agent_line(event: JsonValue) -> str:
    """An Agent event's line: ``run_start:1``, ``loop:1:tool_end:fast-call``, ``run_end:1:stop``."""
    kind = str(event.get("type")) if isinstance(event, dict) else "None"
    run = _path(event, ("runId",))
    if kind == "loop":
        return f"loop:{run}:{loop_line(_path(event, ('event',)))}"
    if kind == "run_end":
        return f"run_end:{run}:{_path(event, ('result', 'reason'))}"
    return f"{kind}:{run}"
