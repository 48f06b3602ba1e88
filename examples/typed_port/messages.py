"""The port's own message types: dataclasses with Python names (``stop_reason``, ``tool_call_id``).

Nothing here knows about JSON; ``wire.py`` converts to and from the IR's JSON form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class _Absent:
    """Marks an optional field that is not set (``None`` is a value some fields can hold); copies are itself."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __deepcopy__(self, memo: dict[int, Any]) -> _Absent:
        return self


ABSENT: Any = _Absent()


@dataclass
class Text:
    text: str


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: Any
    raw_arguments: str | None = None


@dataclass
class Usage:
    input: float
    output: float
    total_tokens: float


@dataclass
class UserMsg:
    content: list[Text]
    timestamp: float


@dataclass
class AssistantMsg:
    content: list[Text | ToolCall]
    provider: str
    model: str
    usage: Usage
    stop_reason: str
    timestamp: float
    error_message: str | None = None


@dataclass
class ToolResultMsg:
    tool_call_id: str
    tool_name: str
    content: list[Text]
    is_error: bool
    timestamp: float
    details: Any = ABSENT


@dataclass
class SystemMsg:
    content: str
    timestamp: float
    sections: dict[str, str | None] | None = None


Message = UserMsg | AssistantMsg | ToolResultMsg | SystemMsg


@dataclass
class Context:
    messages: list[Message] = field(default_factory=list)


@dataclass
class ErrorTurn:
    """A scripted failure, after some text or none."""

    stop_reason: str
    error_message: str
    partial_text: str | None = None


# -- the six model events ---------------------------------------------------------------------


@dataclass
class Start:
    partial: AssistantMsg


@dataclass
class TextDelta:
    index: int
    delta: str
    partial: AssistantMsg


@dataclass
class ToolCallDelta:
    index: int
    delta: str
    partial: AssistantMsg


@dataclass
class ToolCallEnd:
    index: int
    tool_call: ToolCall
    partial: AssistantMsg


@dataclass
class Done:
    reason: str
    message: AssistantMsg


@dataclass
class Failed:
    reason: str
    error: AssistantMsg


Event = Start | TextDelta | ToolCallDelta | ToolCallEnd | Done | Failed
