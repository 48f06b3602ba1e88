"""ScriptedLLM: plays a fixed script of turns, one per ``play()`` call, and records each context."""

from __future__ import annotations

import asyncio
import copy

from .channel import ModelChannel
from .js_text import stringify
from .messages import AssistantMsg, Context, Done, ErrorTurn, Failed, Start, Text, TextDelta, ToolCall, ToolCallDelta, ToolCallEnd
from .views import make_assistant

EXHAUSTED = "ScriptedModel 没有更多响应"
CANCELLED = "Request was aborted"


class CancelToken:
    def __init__(self) -> None:
        self.cancelled = False


class CancelSource:
    """Owns a token; ``cancel()`` trips it."""

    def __init__(self) -> None:
        self.token = CancelToken()

    def cancel(self) -> None:
        self.token.cancelled = True


class ScriptedLLM:
    def __init__(self, turns: list[AssistantMsg | ErrorTurn]) -> None:
        self._turns = turns
        self._next = 0
        self.history: list[Context] = []

    def play(self, context: Context, token: CancelToken | None = None) -> ModelChannel:
        """The channel of the next turn; its events come in a later loop callback."""
        channel = ModelChannel()
        self.history.append(copy.deepcopy(context))
        turn = self._turns[self._next] if self._next < len(self._turns) else None
        self._next += 1
        asyncio.get_running_loop().call_soon(self._produce, channel, turn, token)
        return channel

    def _produce(self, channel: ModelChannel, turn: AssistantMsg | ErrorTurn | None, token: CancelToken | None) -> None:
        if token is not None and token.cancelled:
            finish(channel, make_assistant([], "aborted", error_message=CANCELLED))
        elif turn is None:
            finish(channel, make_assistant([], "error", error_message=EXHAUSTED))
        elif isinstance(turn, ErrorTurn):
            content: list[Text | ToolCall] = [Text(turn.partial_text)] if turn.partial_text else []
            emit(channel, make_assistant(content, turn.stop_reason, error_message=turn.error_message))
        else:
            emit(channel, copy.deepcopy(turn))


def emit(channel: ModelChannel, message: AssistantMsg) -> None:
    """Start, one delta (a tool call: delta then end) per block, then the terminal event."""
    partial = copy.deepcopy(message)
    partial.content, partial.stop_reason = [], "stop"
    channel.push(Start(copy.deepcopy(partial)))
    for index, block in enumerate(message.content):
        if isinstance(block, Text):
            partial.content.append(copy.deepcopy(block))
            channel.push(TextDelta(index, block.text, copy.deepcopy(partial)))
            continue
        delta = block.raw_arguments if block.raw_arguments is not None else stringify(block.arguments)
        partial.content.append(ToolCall(block.id, block.name, {}, delta))
        channel.push(ToolCallDelta(index, delta, copy.deepcopy(partial)))
        partial.content[index] = copy.deepcopy(block)
        channel.push(ToolCallEnd(index, copy.deepcopy(block), copy.deepcopy(partial)))
    finish(channel, message)


def finish(channel: ModelChannel, message: AssistantMsg) -> None:
    if message.stop_reason in ("error", "aborted"):
        channel.push(Failed(message.stop_reason, message))
    else:
        channel.push(Done(message.stop_reason, message))
    channel.end(message)
