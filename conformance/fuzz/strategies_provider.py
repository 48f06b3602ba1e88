"""Hypothesis strategies for chapter 05's labs 5.1 and 5.2: ``to_provider_messages``, ``to_provider_tools``, ``provider_model_stream``.

Inputs stay inside spec/spec.md section 8 and the transports of spec/fixture-format.md ("The
provider adapter"). Left out on purpose, because the spec leaves them open:

* an abort the transport does not wait for (it would race the chunks it yields: "how a
  transport that yields chunks after an abort without being asked is scheduled"): a call is
  aborted only while the scripted transport waits (``wait_for_abort``), or before it starts;
* a ``requests`` step after a pre-aborted start (when the model builds its request is open);
* a pre-aborted call whose transport yields nothing (no chunk to check the signal before);
* an opening tool chunk whose ``id`` is ``""`` (PROV-MODEL-4 reads "its id, or call-INDEX
  without one"; the course keeps ``""``, the reference does not);
* argument texts JSON parsers disagree on: big integers, NaN, non-ASCII whitespace.

The ``timestamp`` of every assistant message is implementation-defined:
:mod:`conformance.fuzz.expect_provider` makes it a matcher. Each program is tagged with what it
exercises (``role:user``, ``tool``, ``broken-json``, ``aborted``, ...), from which the
case's lab and clauses follow without running anything.
"""

from __future__ import annotations

import itertools
import json
from typing import cast

from hypothesis import strategies as st

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import (
    Program,
    assistant_message,
    churn_transcripts,
    keys,
    system_message,
    texts,
    timestamps,
    tool_result,
    user_message,
)
from conformance.fuzz.strategies_tools import descriptions

# -- lab 5.1: transcripts and tool definitions ------------------------------------------------

#: A tool result with ``details`` one time in three (PROV-MSG-5: it never reaches the wire).
tool_results = st.builds(
    lambda message, details, keep: {**message, "details": details} if keep else message,
    tool_result,
    st.none() | st.sampled_from([{"error": "exit 1"}, "x", 0]),
    st.integers(0, 2).map(lambda n: n == 0),
)
#: A user message of several blocks, often empty ones, which still count as lines (PROV-MSG-2).
user_lines = st.builds(
    lambda lines, timestamp: {"role": "user", "content": [{"type": "text", "text": line} for line in lines], "timestamp": timestamp},
    st.lists(st.sampled_from(["", "a", "第二"]) | texts, min_size=2, max_size=3),
    timestamps,
)


@st.composite
def calling_assistant(draw: st.DrawFn) -> JsonObject:
    """An assistant turn whose tool calls carry a raw argument text half the time (PROV-MSG-4: it wins, even ``""``)."""
    message = draw(assistant_message(("toolUse",)))
    calls = [block for block in cast(list[JsonObject], message["content"]) if block["type"] == "toolCall"]
    if not calls:
        message["content"] = [*cast(list[JsonValue], message["content"]), {"type": "toolCall", "id": "c1", "name": "ls", "arguments": None}]
        calls = cast(list[JsonObject], message["content"])[-1:]
    for call in calls:
        if draw(st.booleans()):
            call["rawArguments"] = draw(st.sampled_from(["", '{"path": "a"}', " {} "]) | texts)
    return message


wire_roles = st.one_of(system_message(), user_message, user_lines, assistant_message(), calling_assistant(), tool_results)
transcripts = st.lists(wire_roles, min_size=1, max_size=6) | churn_transcripts  # the empty one is public
parameter_schemas = st.one_of(
    st.just({}),
    st.builds(
        lambda names, required: {
            "type": "object",
            "properties": {name: {"type": "string"} for name in names},
            **({"required": sorted(names)[:1]} if required and names else {}),
        },
        st.lists(st.sampled_from(["path", "query", "路径", "$ref"]), max_size=3, unique=True),
        st.booleans(),
    ),
    st.dictionaries(keys, st.none() | st.booleans() | texts | st.integers(-9, 9), max_size=3),
)
tool_definitions = st.builds(
    lambda name, description, parameters: {"name": name, "description": description, "parameters": parameters},
    st.sampled_from(["read", "search", "写"]) | texts,
    descriptions,
    parameter_schemas,
)


def transcript_tags(messages: list[JsonValue]) -> set[str]:
    """``role:ROLE`` for each role present, ``tool-calls`` when an assistant message holds a tool call."""
    tags: set[str] = set()
    for message in messages:
        assert isinstance(message, dict)
        tags.add(f"role:{message['role']}")
        content = message.get("content")
        if message["role"] == "assistant" and isinstance(content, list):
            if any(isinstance(block, dict) and block.get("type") == "toolCall" for block in content):
                tags.add("tool-calls")
    return tags


@st.composite
def provider_context(draw: st.DrawFn, tags: set[str], messages: st.SearchStrategy[list[JsonObject]] = transcripts) -> JsonObject:
    """A ``ProviderContext``: a transcript and, one time in three, tools (PROV-MSG-6: not on the wire)."""
    drawn = draw(messages)
    context: JsonObject = {"messages": cast(JsonValue, drawn)}
    if draw(st.integers(0, 2)) == 0:
        context["tools"] = cast(JsonValue, draw(st.lists(tool_definitions, max_size=2)))
        tags.add("context-tools")
    tags.update(transcript_tags(cast(list[JsonValue], drawn)))
    return context


@st.composite
def to_provider_messages_program(draw: st.DrawFn) -> Program:
    """``toProviderMessages(context)`` of a transcript of every message kind."""
    program = Program("to_provider_messages", {})
    program.input["context"] = draw(provider_context(program.tags))
    return program


@st.composite
def to_provider_tools_program(draw: st.DrawFn) -> Program:
    """``toProviderTools(tools)``: undefined, empty, or one to four definitions."""
    kind = draw(st.sampled_from(["absent", "empty", "some", "some", "some", "some"]))
    input: JsonObject = {}
    if kind == "empty":
        input["tools"] = []
    elif kind == "some":
        input["tools"] = cast(JsonValue, draw(st.lists(tool_definitions, min_size=1, max_size=4)))
    return Program("to_provider_tools", input, tags={f"tools:{kind}"})


# -- lab 5.2: chunks ---------------------------------------------------------------------------

#: Argument values every JSON parser reads alike: small integers, a few exact fractions, no -0.
argument_values: st.SearchStrategy[JsonValue] = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-999, 999), st.sampled_from([0.5, -2.25, 1e-7]), texts),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(keys, children, max_size=3)),
    max_leaves=6,
)
#: Argument texts that are not complete JSON for JavaScript's ``JSON.parse`` nor for the reference's.
BROKEN_TEXTS = ("NaN", "Infinity", "{'a': 1}", "[1,]", "01", '{"q":', "tru", '"open', "{}}", "undefined")
TOOL_INDEXES = (0, 1, 2, 3, 4, 5, 7)
finish_reasons = st.sampled_from(["stop", "length", "tool_calls", "tool_calls"])
# Counts from 1: without totalTokens, input + output must tell a sum from a default of 0 (PROV-MODEL-9).
finish_usage = st.fixed_dictionaries(
    {}, optional={"input": st.integers(1, 999), "output": st.integers(1, 999), "totalTokens": st.integers(0, 2000)}
)


def is_json(text: str) -> bool:
    """Whether ``text`` is complete JSON (``JSON.parse``'s reading: NaN and the infinities are not)."""

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    return True


@st.composite
def argument_text(draw: st.DrawFn) -> str:
    """A call's whole argument text: JSON, a cut-off JSON text, a known non-JSON text, or nothing."""
    kind = draw(st.sampled_from(["json", "json", "json", "cut", "broken", "empty"]))
    if kind == "empty":
        return ""
    if kind == "broken":
        return draw(st.sampled_from(BROKEN_TEXTS))
    text = json.dumps(draw(argument_values), ensure_ascii=False, separators=(",", ":"))
    return text[: draw(st.integers(1, len(text)))] if kind == "cut" and len(text) > 1 else text


def _pieces(draw: st.DrawFn, text: str, count: int) -> list[str]:
    """``text`` cut into ``count`` consecutive pieces (some maybe empty)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), min_size=count - 1, max_size=count - 1)))
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


@st.composite
def tool_chunks(draw: st.DrawFn, index: int, tags: set[str]) -> list[JsonObject]:
    """One call's chunks, in order: the first opens it (maybe without id or name), later ones may rename it."""
    text = draw(argument_text())
    tags.add("tool")
    if not is_json(text or "{}"):
        tags.add("not-json")
    pieces = _pieces(draw, text, draw(st.integers(1, 3)))
    chunks: list[JsonObject] = []
    for position, piece in enumerate(pieces):
        chunk: JsonObject = {"type": "tool", "index": index}
        # The opening id is a real one or none (never ""); later chunks may send "" (which changes nothing).
        names = st.sampled_from(["read", "search", "读"]) | texts.filter(bool)
        if draw(st.integers(0, 2)) > 0 if position == 0 else draw(st.integers(0, 3)) == 0:
            chunk["id"] = draw(st.sampled_from(["call-a", "c1", f"call-{index}"]) | texts.filter(bool)) if position == 0 else draw(texts)
        if draw(st.booleans()) if position == 0 else draw(st.integers(0, 3)) == 0:  # nameless: PROV-MODEL-8 names the index
            chunk["name"] = draw(names) if position == 0 else draw(st.just("") | names)
        if piece or draw(st.booleans()):
            chunk["argumentsDelta"] = piece
        chunks.append(chunk)
    return chunks


def finish_chunk(draw: st.DrawFn) -> JsonObject:
    chunk: JsonObject = {"type": "finish", "reason": draw(finish_reasons)}
    if draw(st.booleans()):
        chunk["usage"] = cast(JsonValue, draw(finish_usage))
    return chunk


@st.composite
def model_chunks(draw: st.DrawFn, tags: set[str]) -> list[JsonObject]:
    """Text and tool chunks interleaved, then (most often) a finish chunk; sometimes chunks and a finish after it."""
    queues: list[list[JsonObject]] = []
    count = draw(st.sampled_from([2, 0, 1, 3]))  # two or more deltas most often: each partial a snapshot (PROV-MODEL-5)
    texts_drawn = draw(st.lists(st.sampled_from(["先读", "", "a\nb"]) | texts, min_size=count, max_size=count))
    if texts_drawn:
        tags.add("text")
        queues.append([{"type": "text", "delta": delta} for delta in texts_drawn])
    for index in draw(st.lists(st.sampled_from(TOOL_INDEXES), max_size=3, unique=True)):
        queues.append(draw(tool_chunks(index, tags)))
    chunks: list[JsonObject] = []
    while queues:  # interleave the calls and the text, each in its own order (PROV-MODEL-3)
        queue = queues[draw(st.integers(0, len(queues) - 1))]
        chunks.append(queue.pop(0))
        queues = [queue for queue in queues if queue]
    if draw(st.integers(0, 5)) == 0:
        tags.add("no-finish")
        return chunks
    at = len(chunks) if draw(st.integers(0, 3)) else draw(st.integers(0, len(chunks)))
    chunks.insert(at, finish_chunk(draw))
    if draw(st.integers(0, 4)) == 0:
        chunks.append(finish_chunk(draw))  # the last finish decides (PROV-MODEL-6)
    if at < len(chunks) - 1:
        tags.add("after-finish")
    return chunks


def final_reason(chunks: list[JsonObject]) -> str | None:
    """The reason of the last finish chunk, if any."""
    reasons = [str(chunk["reason"]) for chunk in chunks if chunk["type"] == "finish"]
    return reasons[-1] if reasons else None


# -- lab 5.2: the model's program ----------------------------------------------------------------

#: The transcripts a recorded request converts: system and user messages only (PROV-MSG-1, 2), as in
#: the public cases, so that a lab 5.1 bug in the other kinds costs lab 5.1's cases alone.
request_transcripts = st.lists(st.one_of(system_message(), user_message), min_size=1, max_size=3)
SIMPLE_CONTEXT: JsonObject = {"messages": [{"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 1}]}
MODEL_ENDINGS = ("plain", "plain", "throw", "abort", "pre-aborted")


def provider_model_programs() -> st.SearchStrategy[Program]:
    """Each ending's programs as a branch of their own (see :func:`.strategies_tools.execute_tool_call_programs`).

    Mapped, so that a mix holding it does not flatten its five branches into its own (the
    operation would then weigh five times its ``private_weight``).
    """
    return st.one_of(*[provider_model_program(ending) for ending in MODEL_ENDINGS]).map(lambda program: program)


@st.composite
def provider_model_program(draw: st.DrawFn, ending: str) -> Program:
    """A model over a fixed or scripted transport: chunks that end, throw, wait for an abort, or meet a pre-aborted signal."""
    program = Program("provider_model_stream", {})
    chunks = draw(model_chunks(program.tags))
    scripted = ending in {"throw", "abort"} or draw(st.booleans())
    script: list[JsonValue] = [{"chunk": chunk} for chunk in chunks]
    before_wait = chunks
    if ending == "throw":
        at = draw(st.integers(0, len(script)))
        script[at:] = [{"throw": draw(st.sampled_from(["socket reset", ""]) | texts)}]
        before_wait = chunks[:at]
        program.tags.add("thrown")
    elif ending == "abort":
        at = draw(st.integers(0, len(script)))
        after = script[at:] if draw(st.integers(0, 2)) else [{"throw": draw(st.sampled_from(["socket closed"]) | texts)}]
        script[at:] = [{"wait_for_abort": True}, *after]
        before_wait = chunks[:at]
    elif ending == "pre-aborted" and not chunks:
        chunks = [{"type": "text", "delta": draw(texts)}]  # something to check the signal before (see the docstring)
        script = [{"chunk": chunks[0]}]
        program.tags.add("text")
    if ending in {"abort", "pre-aborted"}:
        program.tags.add("aborted")
    program.input = {
        "provider": draw(st.sampled_from(["fixture", "openai-compatible"]) | texts),
        "model": draw(st.sampled_from(["fixture-1", "gpt-test"]) | texts),
        "transport": {"script": script} if scripted else {"chunks": cast(JsonValue, chunks)},
    }
    program.steps = _model_steps(draw, program, ending, scripted, before_wait)
    return program


def _model_steps(draw: st.DrawFn, program: Program, ending: str, scripted: bool, before_wait: list[JsonObject]) -> list[JsonObject]:
    """stream, maybe a paused consume (and the abort), consume to the end, maybe result() and the requests."""
    requested = scripted and ending != "pre-aborted" and draw(st.booleans())
    if requested:
        context = draw(provider_context(program.tags, request_transcripts))
        program.tags.add("requests")
    else:
        context = SIMPLE_CONTEXT
    stream: JsonObject = {"action": "stream", "context": context}
    if ending == "pre-aborted":
        stream["signal"] = "aborted"
    elif ending == "abort" or draw(st.integers(0, 3)) == 0:
        stream["signal"] = "controller"
    steps = [stream]
    if ending == "abort":
        # Pause on an event that comes before the wait, so the abort finds the transport waiting.
        seen = ["start", *(("text_delta",) if any(c["type"] == "text" for c in before_wait) else ())]
        seen += ["toolcall_delta"] if any(c["type"] == "tool" for c in before_wait) else []
        steps += [{"action": "consume", "until": draw(st.sampled_from(seen))}, {"action": "abort"}]
    elif draw(st.integers(0, 3)) == 0:
        steps.append({"action": "consume", "until": draw(st.sampled_from(["start", "text_delta", "toolcall_delta", "toolcall_end"]))})
    if draw(st.integers(0, 4)):
        steps.append({"action": "consume"})
    if draw(st.booleans()) or steps[-1] != {"action": "consume"}:  # the call is always followed to its end
        steps.append({"action": "result"})
    if requested:
        steps.append({"action": "requests"})
    return steps
