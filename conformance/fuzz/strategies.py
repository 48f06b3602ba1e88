"""Hypothesis strategies that draw whole fixture programs: an operation, its input and its steps.

Every program stays inside what the spec prescribes; where a value is implementation-defined
the program records it in :class:`Program` notes, and :mod:`conformance.fuzz.expect` turns
those places into matchers. What is left out on purpose, because the spec leaves it open:

* ``event_stream``: pushes after ``end()``, ``end(value)`` before a terminal event, and
  ``result()`` after an ``end()`` without a terminal event (spec section 5, last paragraph);
* ``scripted_model``: normal turns whose ``stopReason`` is ``error`` or ``aborted``, an empty
  ``partialText``, and calls both aborted and past the end of the script (SM-ABORT-4);
* numbers a JavaScript implementation cannot hold exactly: integers beyond 2**53, NaN and
  infinities (they are not JSON), and lone surrogates (YAML cannot carry them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from hypothesis import strategies as st

from conformance.common.jsontypes import JsonObject, JsonValue

SAFE_INTEGER = 2**53
# Few names, so that system messages replace and delete each other's sections often.
# No integer-like names: their relative order is implementation-defined (SYS-REPLAY-4).
SECTION_NAMES = ("style", "rules", "tools", "記憶")


@dataclass
class Program:
    """One drawn case, before the reference has been asked for its expectations."""

    operation: str
    input: JsonObject
    steps: list[JsonObject] = field(default_factory=list)
    #: Calls whose assistant messages carry implementation-defined provider/model/usage/timestamp.
    loose_calls: set[str] = field(default_factory=set)
    #: Step indexes whose ``threw`` is implementation-defined (a push after the terminal event).
    loose_threw: set[int] = field(default_factory=set)
    #: Facts for the clauses and the lab: "aborted", "exhausted", "error-turn", "system", ...
    tags: set[str] = field(default_factory=set)


# -- JSON values --------------------------------------------------------------------------

texts = st.text(max_size=6)
keys = st.text(max_size=5).filter(lambda key: key != "__proto__")


def _exact_across_json(value: float) -> bool:
    # JavaScript writes an integral double from 2**53 up to 1e21 as plain digits ("30140817629967210"),
    # which Python reads back as an int that is not the double: the two sides would then
    # "differ" in the harness, not in the implementation. Below 2**53 and from 1e21 up, they agree.
    return not SAFE_INTEGER < abs(value) < 1e21


numbers = st.one_of(
    st.integers(-SAFE_INTEGER, SAFE_INTEGER),
    st.floats(allow_nan=False, allow_infinity=False).filter(_exact_across_json),
    st.sampled_from([0.0, -0.0, 1.0, 1e21, 1.5e21, 1e-7, 0.000001, 2**53 * 1.0, 5e-324, 1.7976931348623157e308]),
)
json_scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    json_scalars,
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(keys, children, max_size=3)),
    max_leaves=8,
)
timestamps = st.integers(0, 2**40)


# -- the IR ---------------------------------------------------------------------------------


def text_block() -> st.SearchStrategy[JsonObject]:
    return st.builds(lambda text: {"type": "text", "text": text}, texts)


# Built once: a strategy made inside a composite is rebuilt on every draw, which is slow.
call_ids = st.sampled_from(["c1", "c2", "call_9"]) | texts
tool_names = st.sampled_from(["read", "bash", "写"]) | texts
arguments = st.dictionaries(keys, json_values, max_size=4) | json_values
raw_texts = st.text(max_size=12)
one_in_five = st.integers(0, 4)


@st.composite
def tool_call(draw: st.DrawFn) -> JsonObject:
    block: JsonObject = {"type": "toolCall", "id": draw(call_ids), "name": draw(tool_names), "arguments": draw(arguments)}
    if draw(one_in_five) == 0:  # a preset raw text, which becomes the delta verbatim
        block["rawArguments"] = draw(raw_texts)
    return block


blocks = text_block() | tool_call()
providers = st.sampled_from(["scripted", "anthropic"]) | texts
models = st.sampled_from(["scripted-v1", "m"]) | texts
usage = st.builds(lambda a, b: {"input": a, "output": b, "totalTokens": a + b}, st.integers(0, 999), st.integers(0, 999))


@st.composite
def assistant_message(
    draw: st.DrawFn, stop_reasons: tuple[str, ...] = ("stop", "length", "toolUse", "error", "aborted"), max_blocks: int = 3
) -> JsonObject:
    message: JsonObject = {
        "role": "assistant",
        "content": cast(JsonValue, draw(st.lists(blocks, max_size=max_blocks))),
        "provider": draw(providers),
        "model": draw(models),
        "usage": draw(usage),
        "stopReason": draw(st.sampled_from(stop_reasons)),
        "timestamp": draw(timestamps),
    }
    if draw(st.booleans()) and draw(st.booleans()):
        message["errorMessage"] = draw(texts)
    return message


small_partials = assistant_message(("stop",), max_blocks=1)
user_message = st.builds(
    lambda blocks, ts: {"role": "user", "content": blocks, "timestamp": ts}, st.lists(text_block(), max_size=3), timestamps
)
tool_result = st.builds(
    lambda call_id, name, blocks, is_error, ts: {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": blocks,
        "isError": is_error,
        "timestamp": ts,
    },
    texts,
    texts,
    st.lists(text_block(), max_size=3),
    st.booleans(),
    timestamps,
)


system_contents = st.sampled_from(["", "你是助手", "Be brief."]) | texts
# Mostly three names, so that one message's deletion often meets another's addition.
section_names = st.one_of(
    st.sampled_from(SECTION_NAMES[:3]),
    st.sampled_from(SECTION_NAMES[:3]),
    st.sampled_from(SECTION_NAMES),
    keys.filter(lambda name: not (name.isascii() and name.isdigit())),
)
# None deletes a section (SYS-REPLAY-3): drawn often so that deletions meet additions.
section_maps = st.dictionaries(section_names, st.none() | st.sampled_from(["a", "", "第二"]) | texts, max_size=4)


@st.composite
def system_message(draw: st.DrawFn) -> JsonObject:
    message: JsonObject = {"role": "system", "content": draw(system_contents), "timestamp": draw(timestamps)}
    if draw(st.booleans()):
        message["sections"] = cast(JsonValue, draw(section_maps))
    return message


# Section churn: only system messages, two section names, half of the values deletions. A
# section deleted and added again (SYS-REPLAY-4) needs several messages to line up, which the
# general transcripts rarely do.
churn_sections = st.dictionaries(st.sampled_from(SECTION_NAMES[:2]), st.none() | st.sampled_from(["x", "y"]), min_size=1, max_size=2)
churn_transcripts = st.lists(
    st.builds(lambda sections, ts: {"role": "system", "content": "", "sections": sections, "timestamp": ts}, churn_sections, timestamps),
    min_size=2,
    max_size=6,
)
any_message = st.one_of(user_message, assistant_message(), tool_result, system_message())
# System messages weigh double: replay is about them, the others are only in the way.
transcripts = st.lists(st.one_of(system_message(), system_message(), user_message, assistant_message(), tool_result), max_size=6)


# -- pure operations -------------------------------------------------------------------------


def _text_of_input(draw: st.DrawFn, tags: set[str]) -> JsonObject:
    message = draw(any_message)
    tags.add(str(message["role"]))
    return {"message": message}


def _transcript_input(draw: st.DrawFn, tags: set[str]) -> JsonObject:
    return {"messages": cast(JsonValue, draw(transcripts | churn_transcripts))}


def _assistant_input(draw: st.DrawFn, tags: set[str]) -> JsonObject:
    input: JsonObject = {"content": cast(JsonValue, draw(st.lists(blocks, max_size=3)))}
    if draw(st.booleans()):
        input["stop_reason"] = draw(st.sampled_from(["stop", "length", "toolUse", "error", "aborted"]))
    if draw(st.booleans()):
        overrides: dict[str, Any] = {}
        for name, strategy in (("provider", texts), ("model", texts), ("usage", usage), ("errorMessage", texts), ("timestamp", timestamps)):
            if draw(st.booleans()):
                overrides[name] = draw(strategy)
        input["overrides"] = overrides
    return input


#: Chapter 03's pure operations and how each one's input is drawn, in the order the mixes list
#: them (:mod:`conformance.fuzz.operations`; the order decides what a seed draws).
PURE_INPUTS: dict[str, Callable[[st.DrawFn, set[str]], JsonObject]] = {
    "text_of": _text_of_input,
    "system_message_text": lambda draw, tags: {"message": draw(system_message())},
    "current_system_message": _transcript_input,
    "current_system_prompt": _transcript_input,
    "make_text": lambda draw, tags: {"value": draw(texts)},
    "make_user_message": lambda draw, tags: {"value": draw(texts)},
    "make_assistant_message": _assistant_input,
}


@st.composite
def pure_program(draw: st.DrawFn, operation: str) -> Program:
    """A program of one of :data:`PURE_INPUTS`' operations."""
    tags: set[str] = set()
    return Program(operation, PURE_INPUTS[operation](draw, tags), tags=tags)


# -- event streams (chapter 02/03) -----------------------------------------------------------

MODEL_EVENT_TYPES = ("start", "text_delta", "toolcall_delta", "toolcall_end")


@dataclass(frozen=True)
class _EventKinds:
    """The events one event_stream program pushes: its terminal types, the others, and how to draw one of a type."""

    terminal_types: list[str]
    other_types: tuple[str, ...]
    event: Callable[[str], JsonObject]


@st.composite
def event_stream_program(draw: st.DrawFn) -> Program:
    assistant = draw(st.booleans())
    program = Program("event_stream", {"kind": "assistant"})
    kinds = _assistant_event_kinds(draw) if assistant else _generic_event_kinds(draw, program)
    steps: list[JsonObject] = []
    consumer_at = draw(st.integers(-1, 6))  # where start_consumer goes; -1: consume iterates at the end
    for _ in range(draw(st.integers(0, 4))):
        if len(steps) == consumer_at:
            steps.append({"action": "start_consumer"})
        steps.append({"action": "push", "event": kinds.event(draw(st.sampled_from(kinds.other_types)))})
    terminal = draw(st.booleans())
    ended = False
    if terminal:
        _push_terminal(draw, program, kinds, steps)
    elif draw(st.booleans()):
        steps.append({"action": "end"})
        ended = True
    _consume(draw, steps, consumer_at, ended)
    program.steps = steps
    program.tags.add("terminal" if terminal else "no-terminal")
    return program


def _assistant_event_kinds(draw: st.DrawFn) -> _EventKinds:
    def event(kind: str) -> JsonObject:
        # Pushed events must be model events (EV-1): fixtures lint checks their shape.
        if kind == "done":
            return {"type": kind, "reason": draw(st.sampled_from(["stop", "length", "toolUse"])), "message": draw(assistant_message())}
        if kind == "error":
            return {"type": kind, "reason": draw(st.sampled_from(["error", "aborted"])), "error": draw(assistant_message())}
        partial = draw(small_partials)
        if kind == "start":
            return {"type": kind, "partial": partial}
        index = draw(st.integers(0, 3))
        if kind == "toolcall_end":
            return {"type": kind, "contentIndex": index, "toolCall": draw(tool_call()), "partial": partial}
        return {"type": kind, "contentIndex": index, "delta": draw(texts), "partial": partial}

    return _EventKinds(["done", "error"], MODEL_EVENT_TYPES, event)


def _generic_event_kinds(draw: st.DrawFn, program: Program) -> _EventKinds:
    """A generic EventStream's terminal types and result field (drawn, and set as the program's input)."""
    terminal_types = draw(st.lists(st.sampled_from(["end", "fail", "finish"]), min_size=1, max_size=2, unique=True))
    result_field = draw(st.sampled_from(["result", "value"]))
    program.input = {"kind": "generic", "terminal_types": list(terminal_types), "result_field": result_field}

    def event(kind: str) -> JsonObject:
        body: JsonObject = {"type": kind}
        if kind in terminal_types:
            # An object, so that "the same object" means the same thing in every language.
            body[result_field] = {"v": draw(json_values)}
        else:
            body["n"] = draw(st.integers(0, 9))
        return body

    other_types = ("tick", "data", *[t for t in ("end", "fail", "finish") if t not in terminal_types])
    return _EventKinds(terminal_types, other_types, event)


def _push_terminal(draw: st.DrawFn, program: Program, kinds: _EventKinds, steps: list[JsonObject]) -> None:
    """A terminal event, maybe pushes after it, maybe an ``end`` (with a late result or none)."""
    steps.append({"action": "push", "event": kinds.event(draw(st.sampled_from(kinds.terminal_types)))})
    for _ in range(draw(st.integers(0, 2))):
        # STREAM-4: not delivered; whether the push throws is implementation-defined.
        program.loose_threw.add(len(steps))
        steps.append({"action": "push", "event": kinds.event(draw(st.sampled_from([*kinds.other_types, *kinds.terminal_types])))})
    if draw(st.booleans()):
        step: JsonObject = {"action": "end"}
        if draw(st.booleans()):
            step["result"] = {"late": draw(json_values)}
        steps.append(step)


def _consume(draw: st.DrawFn, steps: list[JsonObject], consumer_at: int, ended: bool) -> None:
    """The consumer (started now if it was not), then maybe the stream's result."""
    if consumer_at >= len(steps) and draw(st.booleans()):
        steps.append({"action": "start_consumer"})
    steps.append({"action": "consume"})
    # After end() without a terminal event, result() is implementation-defined: not asked.
    if not ended and draw(st.booleans()):
        steps.append({"action": "result"})


# -- ScriptedModel (chapter 04) --------------------------------------------------------------

error_turn = st.builds(
    lambda reason, message, partial: {"stopReason": reason, "errorMessage": message, **({"partialText": partial} if partial else {})},
    st.sampled_from(["error", "aborted"]),
    texts,
    st.none() | st.text(min_size=1, max_size=6),
)
normal_turn = assistant_message(("stop", "length", "toolUse"))
contexts = st.builds(lambda messages: {"messages": messages}, st.lists(st.one_of(user_message, system_message(), tool_result), max_size=2))


@st.composite
def scripted_model_program(draw: st.DrawFn) -> Program:
    turns = draw(st.lists(st.one_of(normal_turn, error_turn), max_size=3))
    program = Program("scripted_model", {"turns": turns})
    calls = [f"c{index + 1}" for index in range(draw(st.integers(1, 4)))]
    steps: list[JsonObject] = []
    late_aborts: list[str] = []
    for index, call in enumerate(calls):
        steps.extend(_call_steps(draw, program, turns, index, call, late_aborts))
    if draw(st.booleans()):
        steps.append({"action": "settle"})
    for call in draw(st.permutations(calls)):
        if call in late_aborts and draw(st.booleans()):
            steps.append({"action": "abort", "call": call})
        steps.append({"action": "consume", "call": call})
        if draw(st.booleans()):
            steps.append({"action": "result", "call": call})
    steps.append({"action": "requests"})
    steps.append({"action": "check_turns"})
    program.steps = steps
    return program


def _call_steps(
    draw: st.DrawFn, program: Program, turns: list[JsonObject], index: int, call: str, late_aborts: list[str]
) -> list[JsonObject]:
    """Call ``index``'s stream step, with the abort and the context change it may get before any call is consumed.

    A controller the call is not aborted through here goes into ``late_aborts``: it may be
    aborted while the calls are consumed.
    """
    exhausted = index >= len(turns)
    if exhausted:
        program.tags.add("exhausted")
        program.loose_calls.add(call)
    elif "role" not in turns[index]:
        program.tags.add("error-turn")
        program.loose_calls.add(call)
    # SM-ABORT-4: aborted and exhausted at once is implementation-defined, never drawn.
    signal = "none" if exhausted else draw(st.sampled_from(["none", "none", "aborted", "controller"]))
    step: JsonObject = {"action": "stream", "call": call, "context": draw(contexts)}
    if signal != "none":
        step["signal"] = signal
        program.loose_calls.add(call)
        program.tags.add("aborted")
    steps = [step]
    if signal == "controller":
        if draw(st.booleans()):
            steps.append({"action": "abort", "call": call})  # before the producer runs (SM-DEFER-1)
        else:
            late_aborts.append(call)
    # One call in three; 2, not 0, means "mutate": Hypothesis shrinks towards 0, so a
    # shrunk case keeps a mutate_context step only when its divergence needs one.
    if draw(st.integers(0, 2)) == 2:
        program.tags.add("mutate")
        steps.append({"action": "mutate_context", "call": call, "append": {"path": "/messages", "value": draw(user_message)}})
    return steps
