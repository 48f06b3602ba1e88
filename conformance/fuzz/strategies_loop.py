"""Hypothesis strategies for chapter 07's ``run_agent_loop`` (labs 7.1 to 7.5, spec/spec.md section 10).

A program is one ``runAgentLoop`` in spec/fixture-format.md's scenario vocabulary: the caller's
context, the model's scripted turns, scripted tools (chapter 06's schema vocabulary) or an
injected executor scripted per call id, options and steps. Each lab has a branch of its own
(Hypothesis mutates what it drew before, so one strategy that drew the lab would go long
stretches without a lab): 7.1 a text stop or a ``stream()`` that throws, 7.2 one call per
step over a few round trips, 7.3 a turn that runs no tool, 7.4 a concurrent batch, 7.5 a
signal or a ``maxSteps``. The program is tagged ``lab:N.N`` and with what it exercises.

What the spec leaves open is never drawn:

* the order in which calls of one batch settle when nothing orders them: in a batch of two or
  more calls every call but one waits on a gate of its own, the steps release the gates one
  at a time and wait for that call's ``tool_end`` (the one ungated call's first), and no tool
  reports progress before its gate (when two executions start is open, LOOP-BATCH-1 fixes only
  the ``tool_start`` events);
* an abort at a moment the steps cannot pin: only before the run, right after ``start`` (the
  first model turn is being produced), while a tool waits on its gate, or from a tool;
* a model asked past its script (the scripted model's exhaustion message has a clock in it):
  a correct loop always finds a turn; and a thrown non-``Error`` (JavaScript only).

Timestamps the loop and the tools make are implementation-defined (section 10, last
paragraph): :mod:`conformance.fuzz.expect_agent` matches each one the input did not give with
``{$type: number}``. Call ids are unique in a program and tool names in a batch, so the
steps can name what they wait for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from hypothesis import strategies as st

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program, text_block, texts, transcripts
from conformance.fuzz.strategies_tools import arguments_for, outputs, scripted_tool, shapes, text_blocks

LOOP_LABS = ("7.1", "7.2", "7.3", "7.4", "7.5")
ZERO_USAGE: JsonObject = {"input": 0, "output": 0, "totalTokens": 0}
timestamps = st.integers(0, 10**6)
names = st.sampled_from(["echo", "probe", "slow", "fast", "读"]) | texts.filter(bool)
call_ids = st.sampled_from(["c1", "c2", "call-9", "slow-call"]) | texts.filter(bool)
texts_only = st.lists(text_block(), max_size=2)
#: One draw in four: the last value, not 0, so that Hypothesis's simplest draw is the common case.
rarely = st.integers(0, 3).map(lambda n: n == 3)
# Built once: a strategy made inside a composite is built again on every draw, which is slow.
short_transcripts = transcripts.map(lambda found: found[:4])
signals = st.sampled_from([None, "given"])
#: A round trip's call: mostly one its tool runs, else arguments its schema refuses, or a tool nobody registered.
call_kinds = st.sampled_from(["valid", "valid", "valid", "invalid", "missing"])
any_arguments = st.dictionaries(st.sampled_from(["value", "x"]), texts, max_size=1)
opaque_arguments = st.dictionaries(st.sampled_from(["value", "path"]), texts, max_size=2)
stacks = st.sampled_from([None, "STACK_SECRET"])
last_reasons = st.sampled_from(["stop", "toolUse"])
#: A definition in the caller's context.tools: it must never reach the model (LOOP-REQ-1).
STALE_TOOLS: JsonValue = [{"name": "stale-definition", "description": "stale", "parameters": {"type": "object"}}]
#: The stop reasons of a turn that runs no tool and ends the run (LOOP-SKIP-1 to 3).
SKIP_KINDS = ("length", "error", "aborted", "unexpected-stop", "tooluse-without-call")


def unlike(value: str, taken: list[str]) -> str:
    """``value``, or ``value`` with primes added until no string of ``taken`` is it.

    Cheaper than a filtered strategy, which Hypothesis builds and validates again on each draw.
    """
    while value in taken:
        value += "'"
    return value


class UniqueIds:
    """Unique call ids and tool names within one program."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.ids: list[str] = []
        self.names: list[str] = []

    def call_id(self) -> str:
        value = unlike(self.draw(call_ids), self.ids)
        self.ids.append(value)
        return value

    def name(self) -> str:
        value = unlike(self.draw(names), self.names)
        self.names.append(value)
        return value


def turn(draw: st.DrawFn, content: list[JsonValue], stop_reason: str) -> JsonObject:
    """A scripted turn playing an assistant message of ``content`` that ends with ``stop_reason``."""
    message: JsonObject = {
        "role": "assistant",
        "content": content,
        "provider": "scripted",
        "model": "scripted-v1",
        "usage": dict(ZERO_USAGE),
        "stopReason": stop_reason,
        "timestamp": draw(timestamps),
    }
    if stop_reason == "error" or (stop_reason == "aborted" and draw(st.booleans())):
        message["errorMessage"] = draw(texts)
    return {"message": message}


def call_block(call_id: str, name: str, arguments: JsonValue) -> JsonObject:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def _context(draw: st.DrawFn, program: Program, lab: str) -> JsonObject:
    """The caller's context: a transcript (system messages often), in lab 7.1 now and then stale tool definitions.

    Each lab's cases leave the other labs' clauses alone, as the public ones do: stale
    definitions (LOOP-REQ-1) only in lab 7.1, and several system messages (LOOP-SYS-1: none is
    folded or moved) only in lab 7.2; elsewhere a transcript holds one at most.
    """
    messages = cast(list[JsonObject], draw(short_transcripts))
    if lab != "7.2":
        first = next((index for index, message in enumerate(messages) if message.get("role") == "system"), len(messages))
        messages = [message for index, message in enumerate(messages) if index <= first or message.get("role") != "system"]
    context: JsonObject = {"messages": cast(JsonValue, messages)}
    if lab == "7.1" and draw(rarely):
        context["tools"] = STALE_TOOLS
        program.tags.add("context-tools")
    if any(message.get("role") == "system" for message in messages):
        program.tags.add("system")
    return context


def _program(draw: st.DrawFn, lab: str, turns: list[JsonObject], tools: list[JsonObject], tags: set[str]) -> Program:
    program = Program("run_agent_loop", {}, tags={f"lab:{lab}", *tags})
    program.input["context"] = _context(draw, program, lab)
    program.input["model"] = {"turns": cast(JsonValue, turns)}
    if tools:
        program.input["tools"] = cast(JsonValue, tools)
    return program


def _options(program: Program, **options: JsonValue) -> None:
    given: JsonObject = {key: value for key, value in options.items() if value is not None}
    if given:
        program.input["options"] = given


# -- lab 7.1: a text stop, the request, a stream() that throws ----------------------------------


@st.composite
def text_stop_program(draw: st.DrawFn) -> Program:
    """One turn of text that stops the run (or a ``stream()`` that throws), among registered tools that never run."""
    ids = UniqueIds(draw)
    tools = [draw(scripted_tool(ids.name())) for _ in range(draw(st.integers(0, 2)))]
    throws = draw(rarely)
    first: JsonObject = {"throw": draw(texts)} if throws else turn(draw, cast(list[JsonValue], draw(texts_only)), "stop")
    turns = [first, *([turn(draw, [call_block(ids.call_id(), "echo", {})], "toolUse")] if draw(st.booleans()) else [])]
    program = _program(draw, "7.1", turns, tools, {"stream-throws"} if throws else set())
    _options(program, on_event=False if draw(rarely) else None, signal=draw(signals))
    return program


# -- lab 7.2: round trips, one call each --------------------------------------------------------


@st.composite
def round_trip_program(draw: st.DrawFn) -> Program:
    """One to three steps of one call each (a tool, a missing tool, bad arguments, or an injected executor), then a stop."""
    ids = UniqueIds(draw)
    tools = [draw(scripted_tool(ids.name())) for _ in range(draw(st.integers(1, 2)))]
    executor: JsonObject | None = {} if draw(rarely) else None
    turns = [_round_trip_turn(draw, ids, tools, executor) for _ in range(draw(st.integers(1, 3)))]
    turns.append(turn(draw, cast(list[JsonValue], draw(texts_only)), "stop"))
    program = _program(draw, "7.2", turns, tools, {"executor"} if executor is not None else set())
    if executor is not None:
        program.input["executor"] = executor
    _options(program, signal=draw(signals))
    return program


def _round_trip_turn(draw: st.DrawFn, ids: UniqueIds, tools: list[JsonObject], executor: JsonObject | None) -> JsonObject:
    """A toolUse turn with one call: to a registered tool (valid or bad arguments) or to a missing one."""
    call_id = ids.call_id()
    tool = draw(st.sampled_from(tools))
    kind = draw(call_kinds)
    shape = cast(JsonObject, tool["schema"]).get("shape")
    name = str(tool["name"])
    if kind == "missing":
        name = unlike(draw(names), [str(other["name"]) for other in tools])
        arguments: JsonValue = cast(JsonValue, draw(any_arguments))
    elif isinstance(shape, dict) and (kind == "valid" or not shape):
        arguments = draw(arguments_for(cast(dict[str, str], shape), valid=True))
    elif isinstance(shape, dict):
        arguments = draw(arguments_for(cast(dict[str, str], shape), valid=False))
    else:  # an opaque schema takes anything
        arguments = cast(JsonValue, draw(opaque_arguments))
    if executor is not None:
        executor[call_id] = cast(JsonValue, executor_script(draw, call_id, name, gate=None, throws=False))
    content: list[JsonValue] = [*cast(list[JsonValue], draw(texts_only)), call_block(call_id, name, arguments)]
    return turn(draw, content, "toolUse")


def executor_script(draw: st.DrawFn, call_id: str, name: str, gate: str | None, throws: bool) -> list[JsonValue]:
    """An injected executor's script for one call: maybe a gate, progress, then its result or a throw."""
    script: list[JsonValue] = [{"wait": gate}] if gate is not None else []
    script.extend({"progress": cast(JsonValue, draw(text_blocks))} for _ in range(draw(st.integers(0, 2))))
    if throws:
        stack = draw(stacks)
        message = draw(texts)
        script.append({"throw": {"message": message, "stack": stack} if stack else message})
        return script
    output = cast(JsonObject, draw(outputs))
    result: JsonObject = {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": output["content"]}
    if "details" in output:
        result["details"] = output["details"]
    result["isError"] = bool(output.get("isError"))
    result["timestamp"] = draw(timestamps)
    script.append({"return_result": result})
    return script


# -- lab 7.3: turns that run no tool -------------------------------------------------------------


def skipped_programs() -> st.SearchStrategy[Program]:
    """Each kind of turn that runs no tool as a branch of its own (as in :func:`run_agent_loop_programs`)."""
    return st.one_of(*[skipped_program(kind) for kind in SKIP_KINDS])


@st.composite
def skipped_program(draw: st.DrawFn, kind: str) -> Program:
    """Maybe a round trip, then a turn of ``kind`` that ends the run without running its calls (tagged ``skip:KIND``)."""
    ids = UniqueIds(draw)
    tools = [draw(scripted_tool(ids.name())) for _ in range(draw(st.integers(1, 2)))]
    turns = [_round_trip_turn(draw, ids, tools, None) for _ in range(draw(st.integers(0, 1)))]
    count = 0 if kind == "tooluse-without-call" else draw(st.integers(1 if kind == "unexpected-stop" else 0, 3))
    calls: list[JsonValue] = [call_block(ids.call_id(), str(draw(st.sampled_from(tools))["name"]), {}) for _ in range(count)]
    content = cast(list[JsonValue], draw(texts_only)) + calls
    reason = {"unexpected-stop": "stop", "tooluse-without-call": "toolUse"}.get(kind, kind)
    turns.append(turn(draw, content, reason))
    if draw(st.booleans()):  # a turn a loop that goes on would play
        turns.append(turn(draw, cast(list[JsonValue], draw(texts_only)), "stop"))
    program = _program(draw, "7.3", turns, tools, {f"skip:{kind}"})
    _options(program, signal=draw(signals))
    return program


# -- lab 7.4: a concurrent batch -----------------------------------------------------------------


@st.composite
def batch_program(draw: st.DrawFn) -> Program:
    """One toolUse turn of two or three calls, each but one gated, the gates opened in a drawn order; then a stop."""
    ids = UniqueIds(draw)
    count = draw(st.integers(2, 3))
    executor = draw(st.booleans())
    immediate = draw(st.integers(-1, count - 1))  # the one call that settles at once, or none
    calls: list[JsonValue] = []
    tools: list[JsonObject] = []
    scripts: JsonObject = {}
    gated: list[tuple[str, str, str]] = []  # (gate, tool name, call id)
    tags: set[str] = {"executor"} if executor else set()
    for index in range(count):
        call_id, name, gate = ids.call_id(), ids.name(), f"g{index + 1}"
        shape = draw(shapes)
        arguments: JsonValue = draw(arguments_for(shape, valid=True))
        # An injected executor's rejection is the loop's to catch (LOOP-BATCH-3): drawn often there.
        throws = draw(st.booleans() if executor else rarely)
        tags |= {"throws"} if throws else set()
        if executor:
            scripts[call_id] = cast(JsonValue, executor_script(draw, call_id, name, None if index == immediate else gate, throws))
        else:
            tool = draw(scripted_tool(name, throws=throws, shape=shape))
            # The ungated call may report progress: nothing else can emit while the others wait.
            script = cast(list[JsonValue], tool.get("script", []))
            tool["script"] = cast(JsonValue, script if index == immediate else [{"wait": gate}, *script])
            tools.append(tool)
        if index != immediate:
            gated.append((gate, name, call_id))
        calls.append(call_block(call_id, name, arguments))
    turns = [turn(draw, calls, "toolUse"), turn(draw, cast(list[JsonValue], draw(texts_only)), "stop")]
    program = _program(draw, "7.4", turns, tools, tags)
    if executor:
        program.input["executor"] = scripts
    first: list[JsonValue] = (
        [] if immediate < 0 else [{"await_event": {"type": "tool_end", "callId": cast(JsonObject, calls[immediate])["id"]}}]
    )
    program.input["steps"] = ["start", {"await_started": [name for _, name, _ in gated]}, *first, *_releases(draw, gated)]
    _options(program, signal=draw(signals))
    return program


def _releases(draw: st.DrawFn, gated: list[tuple[str, str, str]]) -> list[JsonValue]:
    """Each gate opened in a drawn order, each call's ``tool_end`` awaited before the next gate opens."""
    steps: list[JsonValue] = []
    for gate, _, call_id in draw(st.permutations(gated)):
        steps.extend([{"release": gate}, {"await_event": {"type": "tool_end", "callId": call_id}}])
    steps.append("await_run")
    return steps


# -- lab 7.5: the signal and maxSteps ------------------------------------------------------------

LIMIT_KINDS = ("pre-aborted", "abort-in-tool", "abort-while-waiting", "abort-while-streaming", "max-steps")


def limits_programs() -> st.SearchStrategy[Program]:
    """Each way the signal or the limit ends a run as a branch of its own."""
    return st.one_of(*[limits_program(kind) for kind in LIMIT_KINDS])


@st.composite
def limits_program(draw: st.DrawFn, kind: str) -> Program:
    """A run the signal or ``maxSteps`` ends as ``kind`` says (tagged ``limit:KIND``)."""
    ids = UniqueIds(draw)
    plain = draw(scripted_tool(ids.name()))
    tools = [plain]
    before = 0 if kind == "abort-while-streaming" else draw(st.integers(0, 1))
    turns = [_round_trip_turn(draw, ids, [plain], None) for _ in range(before)]
    max_steps: int | None = None
    steps: list[JsonValue] | None = None
    if kind == "max-steps":
        max_steps = draw(st.integers(0, 3))
        turns = [_round_trip_turn(draw, ids, [plain], None) for _ in range(max_steps)]
        turns.append(turn(draw, cast(list[JsonValue], draw(texts_only)), draw(last_reasons)))
    elif kind in ("abort-in-tool", "abort-while-waiting"):
        name = ids.name()
        script: list[JsonValue] = [{"abort": True}] if kind == "abort-in-tool" else [{"wait": "go"}]
        script.append({"return": cast(JsonValue, draw(outputs))})
        tools.append({"name": name, "description": draw(texts), "schema": {"opaque": True}, "script": script})
        turns.append(turn(draw, [call_block(ids.call_id(), name, {})], "toolUse"))
        if kind == "abort-while-waiting":
            steps = ["start", {"await_started": name}, "abort", {"release": "go"}, "await_run"]
        if not draw(rarely):
            # The last step the limit allows: the signal read after the batch wins over the limit
            # (LOOP-ABORT-2); without a limit, a loop that reads it before the next request only agrees.
            max_steps = before + 1
    elif kind == "abort-while-streaming":
        steps = ["start", "abort", "await_run"]
    turns.append(turn(draw, cast(list[JsonValue], draw(texts_only)), "stop"))
    program = _program(draw, "7.5", turns, tools, {f"limit:{kind}", *(["max-steps"] if max_steps is not None else [])})
    if steps is not None:
        program.input["steps"] = steps
    signal = None if kind == "max-steps" else "pre_aborted" if kind == "pre-aborted" else "given"
    _options(program, signal=signal, max_steps=max_steps)
    return program


_LAB_PROGRAMS = {
    "7.1": text_stop_program,
    "7.2": round_trip_program,
    "7.3": skipped_programs,
    "7.4": batch_program,
    "7.5": limits_programs,
}


def _lab_strategy(lab: str) -> Callable[[], st.SearchStrategy[Program]]:
    return lambda: _LAB_PROGRAMS[lab]().map(one_block_progress)


#: Each lab's programs (a new strategy object each call).
LAB_STRATEGIES = {lab: _lab_strategy(lab) for lab in LOOP_LABS}


def one_block_progress(program: Program) -> Program:
    """Outside lab 7.2, every progress report of ``program`` holds one block at most.

    How ``reportProgress`` passes a tool's content on is lab 7.2's (LOOP-TOOL-2): a loop that
    passes only the first block then fails lab 7.2's cases, not those of a batch or a limit.
    """
    if "lab:7.2" in program.tags:
        return program
    tools = cast(list[JsonObject], program.input.get("tools") or [])
    executor = cast(JsonObject, program.input.get("executor") or {})
    scripts = [tool.get("script") for tool in tools] + list(executor.values())
    for script in scripts:
        for action in cast(list[JsonObject], script or []):
            if isinstance(action.get("progress"), list):
                action["progress"] = cast(list[JsonValue], action["progress"])[:1]
    return program


def run_agent_loop_programs() -> st.SearchStrategy[Program]:
    """Each lab's programs as a branch of its own (see the module's docstring)."""
    return st.one_of(*[LAB_STRATEGIES[lab]() for lab in LOOP_LABS])
