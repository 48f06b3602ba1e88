"""Whether a shared agent case is one scenario in the course's and pi-agent-core-1's views.

spec/fixture-format.md (Shared cases) says what "the same" means across the two vocabularies:
the same model turns, transcript in, tools and gates, order of release, and equal
expectations on the observations both profiles have (the trace's tool events mapped by name,
the transcript's tool results in order). :func:`scenario_differences` reads both views of a
case and names each rule they break.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# The course's names for what upstream calls otherwise (events and their keys).
_EVENT_NAMES = {"tool_start": "tool_execution_start", "tool_end": "tool_execution_end"}
_EVENT_KEYS = {"callId": "toolCallId"}


def scenario_differences(course: Mapping[str, object], upstream: Mapping[str, object]) -> list[str]:
    """The rules the course's view and pi-agent-core-1's view of one case break (input and expect of each)."""
    c_in, u_in = _mapping(course.get("input")), _mapping(upstream.get("input"))
    c_out, u_out = _mapping(course.get("expect")), _mapping(upstream.get("expect"))
    found: list[str] = []
    if _turns(c_in) != _turns(u_in):
        found.append(f"model turns: {_turns(c_in)} != {_turns(u_in)}")
    upstream_in = [*_list(_mapping(u_in.get("context")).get("messages")), *_list(u_in.get("prompts"))]
    if _list(_mapping(c_in.get("context")).get("messages")) != upstream_in:
        found.append("transcript in: the course's context.messages are not upstream's context.messages then prompts")
    if _tools(c_in) != _tools(u_in):
        found.append(f"tools and gates: {_tools(c_in)} != {_tools(u_in)}")
    if [_mapped(step) for step in _list(c_in.get("steps"))] != _list(u_in.get("steps")):
        found.append("order of release: the steps differ once event names are mapped")
    if "trace" in c_out and "trace" in u_out and _tool_events(c_out["trace"]) != _tool_events(u_out["trace"]):
        found.append(f"trace: tool events {_tool_events(c_out['trace'])} != {_tool_events(u_out['trace'])}")
    course_result = _mapping(c_out.get("result")).get("messages")
    if course_result is not None and "result" in u_out and _tool_results(course_result) != _tool_results(u_out["result"]):
        found.append(f"tool results: {_tool_results(course_result)} != {_tool_results(u_out['result'])}")
    return found


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def _turns(given: Mapping[str, object]) -> list[object]:
    """Each scripted turn's content and stop reason (or what it throws): the fields both profiles' messages have."""
    turns: list[object] = []
    for turn in _list(_mapping(given.get("model")).get("turns")):
        message = _mapping(_mapping(turn).get("message"))
        turns.append((message.get("content"), message.get("stopReason"), _mapping(turn).get("throw")))
    return turns


def _tools(given: Mapping[str, object]) -> list[object]:
    """Each tool's name and script, a return's content only (upstream's results also carry details)."""
    tools: list[object] = []
    for tool in _list(given.get("tools")):
        script = []
        for entry in _list(_mapping(tool).get("script")):
            entry = _mapping(entry)
            returned = entry.get("return")
            script.append({**entry, "return": _mapping(returned).get("content")} if returned is not None else dict(entry))
        tools.append((_mapping(tool).get("name"), script))
    return tools


def _mapped(step: object) -> object:
    """A course step in upstream's words: an awaited event's type and keys renamed."""
    if isinstance(step, Mapping) and isinstance(step.get("await_event"), Mapping):
        event = step["await_event"]
        renamed = {_EVENT_KEYS.get(key, key): _EVENT_NAMES.get(value, value) if key == "type" else value for key, value in event.items()}
        return {**step, "await_event": renamed}
    return step


def _tool_events(trace: object) -> list[str]:
    """The trace's tool start and end events, in upstream's names."""
    events = []
    for entry in _list(trace):
        name, _, detail = str(entry).partition(":")
        name = _EVENT_NAMES.get(name, name)
        if name in _EVENT_NAMES.values():
            events.append(f"{name}:{detail}")
    return events


def _tool_results(messages: object) -> list[object]:
    """The transcript's tool results in order: call id, content, whether an error."""
    results: list[object] = []
    for message in _list(messages):
        message = _mapping(message)
        if message.get("role") == "toolResult":
            results.append((message.get("toolCallId"), message.get("content"), message.get("isError")))
    return results
