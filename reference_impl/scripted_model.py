"""``ScriptedModel``: a test double that plays a fixed script of turns (chapter 04).

``stream()`` does its bookkeeping synchronously (snapshot the context, pick the
turn, advance the cursor) and returns the stream at once; the events are produced
later, in an event-loop callback, the Python counterpart of ``queueMicrotask``.

Implementation-defined points (spec section 7), and the choices made here:

* A normal turn whose ``stopReason`` is ``"error"`` or ``"aborted"`` ends with an
  ``error`` event (``done`` only carries the other three reasons, EV-1).
* Turns are not copied at construction; each is deep-copied when it is played.
* An error turn's message gets the ``assistant_message`` defaults (provider
  ``"scripted"``, model ``"scripted-v1"``, zero usage, current time); an empty
  ``partialText`` gives ``content: []``.
* A call both aborted and past the end of the script reports the abort.
* Iterating a stream twice: the second pass sees nothing more (one buffer).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence

from .abort import AbortSignal
from .event_stream import AssistantMessageEventStream
from .ir import (
    AgentContext,
    AssistantContent,
    AssistantMessage,
    ModelEvent,
    ScriptedTurn,
    ToolCall,
    assistant_message,
    text,
)
from .json_text import json_text

EXHAUSTED_MESSAGE = "ScriptedModel 没有更多响应"
ABORTED_MESSAGE = "Request was aborted"


class ScriptedModel:
    """Plays ``turns[n-1]`` on the n-th call to ``stream()`` and records requests."""

    def __init__(self, turns: Sequence[ScriptedTurn]) -> None:
        """Build a model that will play ``turns`` in order, one per call."""
        self._turns = turns
        self._cursor = 0
        self.requests: list[AgentContext] = []

    def stream(self, context: AgentContext, signal: AbortSignal | None = None) -> AssistantMessageEventStream:
        """Return the stream of the next turn; its events come in a later callback.

        Call it inside a running event loop. The context is snapshotted and the turn
        chosen now; the abort signal is read only when the events are produced.
        """
        stream = AssistantMessageEventStream()
        # A deep copy: later changes to the caller's context must not show here.
        self.requests.append(copy.deepcopy(context))
        turn = self._turns[self._cursor] if self._cursor < len(self._turns) else None
        self._cursor += 1
        asyncio.get_running_loop().call_soon(self._produce, stream, turn, signal)
        return stream

    def _produce(
        self,
        stream: AssistantMessageEventStream,
        turn: ScriptedTurn | None,
        signal: AbortSignal | None,
    ) -> None:
        """The deferred producer: check abort and exhaustion, else play the turn."""
        if signal is not None and signal.aborted:
            message = assistant_message([], "aborted", {"errorMessage": ABORTED_MESSAGE})
            finish(stream, message)
        elif turn is None:
            message = assistant_message([], "error", {"errorMessage": EXHAUSTED_MESSAGE})
            finish(stream, message)
        else:
            self._play(stream, terminal_message(turn))

    def _play(self, stream: AssistantMessageEventStream, message: AssistantMessage) -> None:
        """Project ``message`` onto events (a method so that variants can replace it)."""
        play(stream, message)


def terminal_message(turn: ScriptedTurn) -> AssistantMessage:
    """The message a turn ends with, never sharing objects with the script."""
    if "role" in turn:  # a normal turn is already a message
        return copy.deepcopy(turn)
    partial_text = turn.get("partialText", "")
    content: list[AssistantContent] = [text(partial_text)] if partial_text else []
    return assistant_message(content, turn["stopReason"], {"errorMessage": turn["errorMessage"]})


def play(stream: AssistantMessageEventStream, message: AssistantMessage) -> None:
    """Push ``start``, one delta (or delta + end) per block, then the terminal."""
    partial = copy.deepcopy(message)
    partial["content"] = []
    partial["stopReason"] = "stop"
    # Each event gets its own snapshot of the partial (SM-PLAY-3).
    stream.push({"type": "start", "partial": copy.deepcopy(partial)})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            partial["content"].append(copy.deepcopy(block))
            stream.push(
                {
                    "type": "text_delta",
                    "contentIndex": index,
                    "delta": block["text"],
                    "partial": copy.deepcopy(partial),
                }
            )
        else:
            raw = block.get("rawArguments")
            delta = raw if raw is not None else json_text(block["arguments"])
            # Arguments stay empty until the call is complete; only the raw text
            # has arrived so far.
            pending: ToolCall = {
                "type": "toolCall",
                "id": block["id"],
                "name": block["name"],
                "arguments": {},
                "rawArguments": delta,
            }
            partial["content"].append(pending)
            stream.push(
                {
                    "type": "toolcall_delta",
                    "contentIndex": index,
                    "delta": delta,
                    "partial": copy.deepcopy(partial),
                }
            )
            partial["content"][index] = copy.deepcopy(block)
            stream.push(
                {
                    "type": "toolcall_end",
                    "contentIndex": index,
                    "toolCall": copy.deepcopy(block),
                    "partial": copy.deepcopy(partial),
                }
            )
    finish(stream, message)


def finish(stream: AssistantMessageEventStream, message: AssistantMessage) -> None:
    """Push the terminal event that carries ``message``, then end the stream."""
    reason = message["stopReason"]
    terminal: ModelEvent
    if reason == "error" or reason == "aborted":
        terminal = {"type": "error", "reason": reason, "error": message}
    else:
        terminal = {"type": "done", "reason": reason, "message": message}
    stream.push(terminal)
    stream.end(message)
