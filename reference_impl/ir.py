"""The message IR of chapter 03: shapes and constructors.

Shapes are TypedDicts that keep the course's own field names (``stopReason``,
``toolCallId``...), so a value serializes to exactly the JSON the spec describes.
Optional fields are ``NotRequired``: unset means the key is absent, never ``None``.
"""

from __future__ import annotations

import time
from typing import Literal, NotRequired, TypedDict, final

# --- content blocks (IR-BLOCK-1, IR-BLOCK-2) ---------------------------------


class TextContent(TypedDict):
    """A text block: ``{type: "text", text}``."""

    type: Literal["text"]
    text: str


class ToolCall(TypedDict):
    """A tool-call block; ``arguments`` is any JSON value, not yet validated."""

    type: Literal["toolCall"]
    id: str
    name: str
    arguments: object
    rawArguments: NotRequired[str]


AssistantContent = TextContent | ToolCall

# --- messages (IR-MSG-1..5, IR-USAGE-1, IR-STOP-1, IR-CTX-1) -----------------

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
DoneReason = Literal["stop", "length", "toolUse"]
ErrorReason = Literal["error", "aborted"]


class Usage(TypedDict):
    """Token counts of one model call."""

    input: int | float
    output: int | float
    totalTokens: int | float


class UserMessage(TypedDict):
    """What the user said."""

    role: Literal["user"]
    content: list[TextContent]
    timestamp: int | float


class AssistantMessage(TypedDict):
    """What the model produced, and why it stopped."""

    role: Literal["assistant"]
    content: list[AssistantContent]
    provider: str
    model: str
    usage: Usage
    stopReason: StopReason
    errorMessage: NotRequired[str]
    timestamp: int | float


class ToolResultMessage(TypedDict):
    """What a tool returned; ``toolCallId`` pairs it with a ``ToolCall.id``."""

    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[TextContent]
    details: NotRequired[object]
    isError: bool
    timestamp: int | float


class SystemMessage(TypedDict):
    """An instruction; a ``None`` section value means "delete this section"."""

    role: Literal["system"]
    content: str
    sections: NotRequired[dict[str, str | None]]
    timestamp: int | float


AgentMessage = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


class AgentContext(TypedDict):
    """The input of one model call: the transcript in the order facts happened."""

    messages: list[AgentMessage]


# --- model events (EV-1) -----------------------------------------------------


class StartEvent(TypedDict):
    """Generation started; ``partial`` has no content yet."""

    type: Literal["start"]
    partial: AssistantMessage


class TextDeltaEvent(TypedDict):
    """Text arrived for the block at ``contentIndex``."""

    type: Literal["text_delta"]
    contentIndex: int
    delta: str
    partial: AssistantMessage


class ToolCallDeltaEvent(TypedDict):
    """Argument text arrived for the tool call at ``contentIndex``."""

    type: Literal["toolcall_delta"]
    contentIndex: int
    delta: str
    partial: AssistantMessage


class ToolCallEndEvent(TypedDict):
    """The tool call at ``contentIndex`` is complete."""

    type: Literal["toolcall_end"]
    contentIndex: int
    toolCall: ToolCall
    partial: AssistantMessage


class DoneEvent(TypedDict):
    """Terminal: the call finished normally with ``message``."""

    type: Literal["done"]
    reason: DoneReason
    message: AssistantMessage


class ErrorEvent(TypedDict):
    """Terminal: the call failed or was aborted; ``error`` keeps the partial."""

    type: Literal["error"]
    reason: ErrorReason
    error: AssistantMessage


ModelEvent = StartEvent | TextDeltaEvent | ToolCallDeltaEvent | ToolCallEndEvent | DoneEvent | ErrorEvent

# --- scripted turns (chapter 04) ---------------------------------------------


# final: no subtype may add a "role" key, which lets type checkers tell the two kinds
# of turn apart with `"role" in turn`.
@final
class ErrorTurn(TypedDict):
    """A scripted failure, optionally after some text was already produced."""

    stopReason: ErrorReason
    errorMessage: str
    partialText: NotRequired[str]


ScriptedTurn = AssistantMessage | ErrorTurn


# --- constructors (IR-MAKE-1..3) ---------------------------------------------


class AssistantOverrides(TypedDict, total=False):
    """Fields of ``assistant_message`` that a caller may fix instead of defaults."""

    provider: str
    model: str
    usage: Usage
    errorMessage: str
    timestamp: int | float


def now_ms() -> int:
    """The current time in milliseconds, like JavaScript's ``Date.now()``."""
    return time.time_ns() // 1_000_000


def text(value: str) -> TextContent:
    """Return the text block ``{type: "text", text: value}``."""
    return {"type": "text", "text": value}


def user_message(value: str) -> UserMessage:
    """Return a user message holding one text block, stamped with the current time."""
    return {"role": "user", "content": [text(value)], "timestamp": now_ms()}


def assistant_message(
    content: list[AssistantContent],
    stop_reason: StopReason = "stop",
    overrides: AssistantOverrides | None = None,
) -> AssistantMessage:
    """Return an assistant message with the given blocks and stop reason.

    Defaults: provider ``"scripted"``, model ``"scripted-v1"``, zero usage, the
    current time in ms, no ``errorMessage``. Keys present in ``overrides`` replace
    them.
    """
    message: AssistantMessage = {
        "role": "assistant",
        # A new list, so that later appends by the caller do not reach the message.
        "content": list(content),
        "provider": "scripted",
        "model": "scripted-v1",
        "usage": {"input": 0, "output": 0, "totalTokens": 0},
        "stopReason": stop_reason,
        "timestamp": now_ms(),
    }
    if overrides is not None:
        if "provider" in overrides:
            message["provider"] = overrides["provider"]
        if "model" in overrides:
            message["model"] = overrides["model"]
        if "usage" in overrides:
            message["usage"] = overrides["usage"]
        if "errorMessage" in overrides:
            message["errorMessage"] = overrides["errorMessage"]
        if "timestamp" in overrides:
            message["timestamp"] = overrides["timestamp"]
    return message
