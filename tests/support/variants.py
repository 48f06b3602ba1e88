"""Deliberately broken variants of the reference, each with one bug a student could write.

Each variant is a binding (see ``conformance.adapters.binding``) that is the reference
with one function or class replaced. ``tests/judging/test_broken_variants.py`` proves that the
suite catches every one of them with a message that points at the bug.
"""

from __future__ import annotations

import asyncio
import copy
import json
import types
from dataclasses import dataclass
from typing import Any, cast

import reference_impl
from reference_impl import scripted_model as sm
from reference_impl.event_stream import EventStream
from reference_impl.ir import DoneEvent


@dataclass(frozen=True)
class Variant:
    """A broken binding, the case it must fail, and a fragment its message must contain."""

    name: str
    binding: Any
    lab: str
    failing_case: str
    message_fragment: str


def reference_binding(**overrides: Any) -> types.SimpleNamespace:
    """The reference as a binding, with some of its names replaced (a one-bug variant)."""
    namespace = {name: getattr(reference_impl, name) for name in reference_impl.__all__}
    namespace.update(overrides)
    return types.SimpleNamespace(**namespace)


# -- chapter 03 -------------------------------------------------------------------------


def _text_of_with_tool_names(message: Any) -> str:
    # The chapter's fault experiment: tool calls leak their name into the projection.
    if message["role"] == "system":
        return reference_impl.system_message_text(message)
    return "\n".join(block["text"] if block["type"] == "text" else block["name"] for block in message["content"])


def _text_of_skipping_empty(message: Any) -> str:
    if message["role"] == "system":
        return reference_impl.system_message_text(message)
    return "\n".join(block["text"] for block in message["content"] if block["type"] == "text" and block["text"])


def _replay_keeping_empty_content(messages: Any) -> Any:
    result = reference_impl.current_system_message(messages)
    if result is not None:
        result["content"] = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    return result


def _replay_with_last_timestamp(messages: Any) -> Any:
    result = reference_impl.current_system_message(messages)
    if result is not None:
        result["timestamp"] = [m for m in messages if m["role"] == "system"][-1]["timestamp"]
    return result


def _replay_keeping_empty_sections(messages: Any) -> Any:
    result = reference_impl.current_system_message(messages)
    if result is not None and "sections" not in result and any(m.get("sections") for m in messages if m["role"] == "system"):
        result["sections"] = {}
    return result


def _replay_in_place(messages: Any) -> Any:
    # Merges later sections into the first system message's own dict.
    systems = [m for m in messages if m["role"] == "system"]
    result = reference_impl.current_system_message(messages)
    if result is not None and "sections" in result and "sections" in systems[0]:
        systems[0]["sections"].clear()
        systems[0]["sections"].update(result["sections"])
        result["sections"] = systems[0]["sections"]
    return result


def _replay_reinsert_keeps_position(messages: Any) -> Any:
    # Deleting with a tombstone instead of removing the key keeps a re-added section in place.
    content: list[str] = []
    sections: dict[str, str | None] = {}
    timestamp = None
    for message in messages:
        if message["role"] != "system":
            continue
        timestamp = message["timestamp"] if timestamp is None else timestamp
        if message["content"]:
            content.append(message["content"])
        sections.update(message.get("sections") or {})
    if timestamp is None:
        return None
    live = {name: value for name, value in sections.items() if value is not None}
    return {"role": "system", "content": "\n\n".join(content), **({"sections": live} if live else {}), "timestamp": timestamp}


# -- event streams ------------------------------------------------------------------------


class _StreamEndingOnlyOnDone(reference_impl.AssistantMessageEventStream):
    """Treats only ``done`` as terminal: an ``error`` never ends the stream by itself."""

    def __init__(self) -> None:
        EventStream.__init__(
            self, lambda event: event["type"] == "done", lambda event: cast(DoneEvent, event)["message"]
        )  # only done ends it


class _StreamCopyingResult(reference_impl.AssistantMessageEventStream):
    """Resolves ``result()`` with a copy of the terminal message instead of the message itself."""

    def result(self) -> Any:
        inner = super().result()

        async def copied() -> Any:
            return copy.deepcopy(await inner)

        return asyncio.ensure_future(copied())


# -- ScriptedModel ------------------------------------------------------------------------


class _ModelThrowingWhenExhausted(reference_impl.ScriptedModel):
    """The chapter's fault experiment: exhaustion raised synchronously from stream()."""

    def stream(self, context: Any, signal: Any = None) -> Any:
        if self._cursor >= len(self._turns):
            raise RuntimeError("script exhausted")
        return super().stream(context, signal)


class _ModelStoringRequestsByReference(reference_impl.ScriptedModel):
    """The chapter's fault experiment: ``requests`` keeps the caller's own context object."""

    def stream(self, context: Any, signal: Any = None) -> Any:
        stream = super().stream(context, signal)
        self.requests[-1] = context
        return stream


class _ModelCopyingRequestsShallowly(reference_impl.ScriptedModel):
    """Copies the messages list but shares the message objects."""

    def stream(self, context: Any, signal: Any = None) -> Any:
        stream = super().stream(context, signal)
        self.requests[-1] = {**context, "messages": list(context["messages"])}
        return stream


class _ModelCheckingAbortTooEarly(reference_impl.ScriptedModel):
    """Reads the signal inside stream(), before returning: a later abort is missed."""

    def stream(self, context: Any, signal: Any = None) -> Any:
        was_aborted = signal is not None and signal.aborted
        frozen: Any = types.SimpleNamespace(aborted=was_aborted)  # a stand-in for the signal: its flag, read once
        return super().stream(context, frozen if signal is not None else None)


class _ModelNotConsumingAbortedTurns(reference_impl.ScriptedModel):
    """An aborted call gives its turn back, so the next call replays it."""

    def stream(self, context: Any, signal: Any = None) -> Any:
        stream = super().stream(context, signal)
        if signal is not None and signal.aborted:
            self._cursor -= 1
        return stream


class _ModelSharingPartials(reference_impl.ScriptedModel):
    """One partial object for every event: earlier events change as later ones arrive."""

    def _play(self, stream: Any, message: Any) -> None:
        partial = {**copy.deepcopy(message), "content": [], "stopReason": "stop"}
        stream.push({"type": "start", "partial": partial})
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                partial["content"].append(copy.deepcopy(block))
                stream.push({"type": "text_delta", "contentIndex": index, "delta": block["text"], "partial": partial})
            else:
                delta = block.get("rawArguments") or reference_impl.json_text(block["arguments"])
                partial["content"].append({**block, "arguments": {}, "rawArguments": delta})
                stream.push({"type": "toolcall_delta", "contentIndex": index, "delta": delta, "partial": partial})
                partial["content"][index] = copy.deepcopy(block)
                stream.push({"type": "toolcall_end", "contentIndex": index, "toolCall": block, "partial": partial})
        sm.finish(stream, message)


class _RecordingStream:
    """Collects what the reference's ``play`` pushes, so a variant can alter it."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def push(self, event: Any) -> None:
        self.events.append(event)

    def end(self, result: Any = None) -> None:
        pass


class _ModelAlteringToolcallDeltas(reference_impl.ScriptedModel):
    """Plays like the reference, then lets a subclass alter each toolcall_delta before it is pushed."""

    def _play(self, stream: Any, message: Any) -> None:
        recorder = _RecordingStream()
        sm.play(recorder, message)  # type: ignore[arg-type]
        for event in recorder.events:
            if event["type"] == "toolcall_delta":
                self.alter(event, message["content"][event["contentIndex"]])
            stream.push(event)
        stream.end(message)

    def alter(self, event: Any, block: Any) -> None:
        raise NotImplementedError


class _ModelWithPythonJsonText(_ModelAlteringToolcallDeltas):
    """json.dumps with its default separators: '{"path": "README.md"}', non-ASCII escaped."""

    def alter(self, event: Any, block: Any) -> None:
        if "rawArguments" not in block:
            event["delta"] = json.dumps(block["arguments"])
            event["partial"]["content"][event["contentIndex"]]["rawArguments"] = event["delta"]


class _ModelFillingArgumentsEarly(_ModelAlteringToolcallDeltas):
    """The toolcall_delta partial already carries the parsed arguments instead of {}."""

    def alter(self, event: Any, block: Any) -> None:
        event["partial"]["content"][event["contentIndex"]]["arguments"] = copy.deepcopy(block["arguments"])


class _ModelWithWrongExhaustionText(reference_impl.ScriptedModel):
    """Reports exhaustion with its own words instead of the chapter's exact text."""

    def _produce(self, stream: Any, turn: Any, signal: Any) -> None:
        if turn is None and not (signal is not None and signal.aborted):
            sm.finish(stream, reference_impl.assistant_message([], "error", {"errorMessage": "script exhausted"}))
        else:
            super()._produce(stream, turn, signal)


class _ModelProducingSynchronously(reference_impl.ScriptedModel):
    """Plays the turn inside stream(), before returning: nothing is deferred."""

    def stream(self, context: Any, signal: Any = None) -> Any:
        stream = reference_impl.AssistantMessageEventStream()
        self.requests.append(copy.deepcopy(context))
        turn = self._turns[self._cursor] if self._cursor < len(self._turns) else None
        self._cursor += 1
        self._produce(stream, turn, signal)
        return stream


class _ModelPlayingTheTurnItself(reference_impl.ScriptedModel):
    """Plays the script's own turn object: the result is the turn, no copy."""

    def _produce(self, stream: Any, turn: Any, signal: Any) -> None:
        if turn is not None and "role" in turn and not (signal is not None and signal.aborted):
            self._play(stream, turn)
        else:
            super()._produce(stream, turn, signal)


class _ModelCopyingTurnsShallowly(reference_impl.ScriptedModel):
    """Plays ``{...turn}``: a new top-level object that shares content, blocks and usage with the script."""

    def _produce(self, stream: Any, turn: Any, signal: Any) -> None:
        if turn is not None and "role" in turn and not (signal is not None and signal.aborted):
            self._play(stream, copy.copy(turn))
        else:
            super()._produce(stream, turn, signal)


class _ModelAppendingToContext(reference_impl.ScriptedModel):
    """Appends the played message to the caller's context, as if it were the Agent loop."""

    def stream(self, context: Any, signal: Any = None) -> Any:
        stream = super().stream(context, signal)

        async def append() -> None:
            context["messages"].append(await stream.result())

        asyncio.get_running_loop().create_task(append())
        return stream


class _ModelRenumberingToolCalls(_ModelAlteringToolcallDeltas):
    """Gives each tool call an id made from its position instead of the script's id."""

    def _play(self, stream: Any, message: Any) -> None:
        for index, block in enumerate(message["content"]):
            if block["type"] == "toolCall":
                block["id"] = f"call_{index}"
        sm.play(stream, message)


def _event_stream_ignoring_end_value(is_terminal: Any, extract_result: Any) -> Any:
    stream = reference_impl.EventStream(is_terminal, extract_result)
    end = stream.end
    stream.end = lambda *args: end()  # type: ignore[method-assign]
    return stream


class _EventStreamNeverFinishingByHand(EventStream[Any, Any]):
    """Iteration delivers every event but, once closed and drained, waits instead of finishing."""

    async def __aiter__(self) -> Any:
        while True:
            if self._buffer:
                yield self._buffer.popleft()
            else:
                waiter = asyncio.get_running_loop().create_future()
                self._waiters.append(waiter)
                await waiter


VARIANTS: list[Variant] = [
    Variant(
        "textof-mixes-in-tool-names",
        reference_binding(text_of=_text_of_with_tool_names),
        "3.1",
        "text-of-fault-experiment-tool-name-excluded",
        'value: expected "先读取\\n再回答" but got "先读取\\nread\\n再回答"',
    ),
    Variant(
        "textof-drops-empty-blocks",
        reference_binding(text_of=_text_of_skipping_empty),
        "3.1",
        "text-of-empty-text-block-middle",
        "value: expected",
    ),
    Variant(
        "replay-keeps-empty-content",
        reference_binding(current_system_message=_replay_keeping_empty_content),
        "3.1",
        "sys-replay-chapter-three-system-messages",
        "value.content: expected",
    ),
    Variant(
        "replay-takes-last-timestamp",
        reference_binding(current_system_message=_replay_with_last_timestamp),
        "3.1",
        "sys-replay-chapter-three-system-messages",
        "value.timestamp: expected 10 but got 30",
    ),
    Variant(
        "replay-leaves-empty-sections",
        reference_binding(current_system_message=_replay_keeping_empty_sections),
        "3.1",
        "sys-replay-all-sections-deleted",
        "value: expected",
    ),
    Variant(
        "replay-mutates-first-message",
        reference_binding(current_system_message=_replay_in_place),
        "3.1",
        "sys-replay-chapter-three-system-messages",
        "input_unchanged: expected true but got false",
    ),
    Variant(
        "replay-readded-section-keeps-position",
        reference_binding(current_system_message=_replay_reinsert_keeps_position),
        "3.1",
        "sys-replay-deleted-then-readded-moves-to-end",
        "section_order[0]: expected",
    ),
    Variant(
        "stream-error-needs-end",
        reference_binding(AssistantMessageEventStream=_StreamEndingOnlyOnDone),
        "3.2",
        "stream-socket-reset-error-ends-without-end",
        "finished: expected true but got false",
    ),
    Variant(
        "stream-result-is-a-copy",
        reference_binding(AssistantMessageEventStream=_StreamCopyingResult),
        "3.2",
        "stream-socket-reset-error-ends-without-end",
        'same_object_as: expected "terminal_event" but got null',
    ),
    Variant(
        "exhaustion-throws-synchronously",
        reference_binding(ScriptedModel=_ModelThrowingWhenExhausted),
        "4.2",
        "sm-exhaust-stream-does-not-throw-synchronously",
        'threw: expected null but got "RuntimeError: script exhausted"',
    ),
    Variant(
        "requests-stored-by-reference",
        reference_binding(ScriptedModel=_ModelStoringRequestsByReference),
        "4.1",
        "sm-multi-opening-example-two-text-turns",
        "requests[0].messages",
    ),
    Variant(
        "requests-copied-shallowly",
        reference_binding(ScriptedModel=_ModelCopyingRequestsShallowly),
        "4.1",
        "sm-req-snapshot-ignores-nested-text-set",
        "requests[0].messages[0].content[0].text",
    ),
    Variant(
        "partials-shared-between-events",
        reference_binding(ScriptedModel=_ModelSharingPartials),
        "4.1",
        "sm-text-two-blocks-content-index-migration",
        "events[0].partial.content",
    ),
    Variant(
        "abort-checked-too-early",
        reference_binding(ScriptedModel=_ModelCheckingAbortTooEarly),
        "4.2",
        "sm-abort-right-after-stream-returns",
        'events[0].type: expected "error" but got "start"',
    ),
    Variant(
        "production-not-deferred",
        reference_binding(ScriptedModel=_ModelProducingSynchronously),
        "4.2",
        "sm-abort-right-after-stream-returns",
        'events[0].type: expected "error" but got "start"',
    ),
    Variant(
        "aborted-call-keeps-its-turn",
        reference_binding(ScriptedModel=_ModelNotConsumingAbortedTurns),
        "4.2",
        "sm-abort-pre-aborted-single-error-next-call-plays-next-turn",
        "events",
    ),
    Variant(
        "json-text-with-python-spacing",
        reference_binding(ScriptedModel=_ModelWithPythonJsonText),
        "4.1",
        "sm-tool-text-then-read-readme",
        'delta: expected "{\\"path\\":\\"README.md\\"}" but got "{\\"path\\": \\"README.md\\"}"',
    ),
    Variant(
        "toolcall-delta-with-arguments",
        reference_binding(ScriptedModel=_ModelFillingArgumentsEarly),
        "4.1",
        "sm-tool-text-then-read-readme",
        "partial.content[1].arguments: expected {} but got",
    ),
    Variant(
        "result-is-the-script-turn",
        reference_binding(ScriptedModel=_ModelPlayingTheTurnItself),
        "4.1",
        "sm-result-is-not-the-script-turn",
        "turns_unchanged: expected true but got false",
    ),
    Variant(
        "result-copies-turn-shallowly",
        reference_binding(ScriptedModel=_ModelCopyingTurnsShallowly),
        "4.1",
        "sm-result-shares-no-object-with-the-script",
        "turns_unchanged: expected true but got false",
    ),
    Variant(
        "model-appends-to-context",
        reference_binding(ScriptedModel=_ModelAppendingToContext),
        "4.1",
        "sm-tool-turn-leaves-caller-context-alone",
        "context.messages: expected 1 item but got 2 items",
    ),
    Variant(
        "tool-call-ids-renumbered",
        reference_binding(ScriptedModel=_ModelRenumberingToolCalls),
        "4.1",
        "sm-tool-same-name-calls-keep-their-ids",
        'expected "call_9" but got "call_0"',
    ),
    Variant(
        "iteration-never-finishes",
        reference_binding(EventStream=_EventStreamNeverFinishingByHand),
        "3.2",
        "stream-generic-iterator-by-hand",
        'steps[4].state: expected "resolved" but got "pending"',
    ),
    Variant(
        "end-value-ignored",
        reference_binding(EventStream=_event_stream_ignoring_end_value),
        "3.2",
        "stream-generic-end-value-without-terminal-resolves",
        'state: expected "resolved" but got "pending"',
    ),
    Variant(
        "exhaustion-wrong-text",
        reference_binding(ScriptedModel=_ModelWithWrongExhaustionText),
        "4.2",
        "sm-exhaust-empty-script-single-error",
        'errorMessage: expected "ScriptedModel 没有更多响应" but got "script exhausted"',
    ),
]

# Each variant's binding is also reachable as --impl python:tests.support.variants:<name_with_underscores>.
for _variant in VARIANTS:
    globals()[_variant.name.replace("-", "_")] = _variant.binding
