"""The port's JSON codec: the IR's JSON form (camelCase keys) to the port's objects and back."""

from __future__ import annotations

from typing import Any

from .messages import (
    ABSENT,
    AssistantMsg,
    Context,
    Done,
    ErrorTurn,
    Failed,
    Start,
    SystemMsg,
    Text,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolResultMsg,
    Usage,
    UserMsg,
)


def block(j: dict[str, Any]) -> Text | ToolCall:
    if j["type"] == "text":
        return Text(j["text"])
    return ToolCall(j["id"], j["name"], j["arguments"], j.get("rawArguments"))


def usage(j: dict[str, Any]) -> Usage:
    return Usage(j["input"], j["output"], j["totalTokens"])


def message(j: dict[str, Any]) -> Any:
    role = j["role"]
    blocks = [block(b) for b in j["content"]] if isinstance(j.get("content"), list) else []
    if role == "user":
        return UserMsg(blocks, j["timestamp"])  # type: ignore[arg-type]
    if role == "assistant":
        return AssistantMsg(blocks, j["provider"], j["model"], usage(j["usage"]), j["stopReason"], j["timestamp"], j.get("errorMessage"))
    if role == "toolResult":
        return ToolResultMsg(j["toolCallId"], j["toolName"], blocks, j["isError"], j["timestamp"], j.get("details", ABSENT))  # type: ignore[arg-type]
    return SystemMsg(j["content"], j["timestamp"], dict(j["sections"]) if "sections" in j else None)


_EVENTS = {"start", "text_delta", "toolcall_delta", "toolcall_end", "done", "error"}


def from_json(j: Any) -> Any:
    """The port's object for a JSON value it knows (message, context, turn, block, model event); others as they are."""
    if not isinstance(j, dict):
        return j
    if "role" in j:
        return message(j)
    if "messages" in j:
        return Context([message(m) for m in j["messages"]])
    if "errorMessage" in j and "stopReason" in j:
        return ErrorTurn(j["stopReason"], j["errorMessage"], j.get("partialText"))
    kind = j.get("type")
    if kind in ("text", "toolCall"):
        return block(j)
    if kind in _EVENTS and ("partial" in j or "message" in j or "error" in j):
        return event(j)
    return j


def event(j: dict[str, Any]) -> Any:
    """A model event: ``start``, ``text_delta``, ``toolcall_delta``, ``toolcall_end``, ``done`` or ``error``."""
    kind = j["type"]
    if kind == "start":
        return Start(message(j["partial"]))
    if kind == "text_delta":
        return TextDelta(j["contentIndex"], j["delta"], message(j["partial"]))
    if kind == "toolcall_delta":
        return ToolCallDelta(j["contentIndex"], j["delta"], message(j["partial"]))
    if kind == "toolcall_end":
        return ToolCallEnd(j["contentIndex"], block(j["toolCall"]), message(j["partial"]))  # type: ignore[arg-type]
    if kind == "done":
        return Done(j["reason"], message(j["message"]))
    return Failed(j["reason"], message(j["error"]))


def to_json(o: Any) -> Any:
    """The IR's JSON form of one of the port's objects; JSON values as they are."""
    if isinstance(o, list):
        return [to_json(item) for item in o]
    if isinstance(o, Text):
        return {"type": "text", "text": o.text}
    if isinstance(o, ToolCall):
        raw = {} if o.raw_arguments is None else {"rawArguments": o.raw_arguments}
        return {"type": "toolCall", "id": o.id, "name": o.name, "arguments": o.arguments, **raw}
    if isinstance(o, Usage):
        return {"input": o.input, "output": o.output, "totalTokens": o.total_tokens}
    if isinstance(o, UserMsg | AssistantMsg | ToolResultMsg | SystemMsg):
        return message_json(o)
    if isinstance(o, Context):
        return {"messages": to_json(o.messages)}
    if isinstance(o, ErrorTurn):
        partial = {} if o.partial_text is None else {"partialText": o.partial_text}
        return {"stopReason": o.stop_reason, "errorMessage": o.error_message, **partial}
    if isinstance(o, Start | TextDelta | ToolCallDelta | ToolCallEnd | Done | Failed):
        return event_json(o)
    return o


def message_json(o: UserMsg | AssistantMsg | ToolResultMsg | SystemMsg) -> dict[str, Any]:
    """A message's JSON form; optional fields only when set."""
    if isinstance(o, UserMsg):
        return {"role": "user", "content": to_json(o.content), "timestamp": o.timestamp}
    if isinstance(o, AssistantMsg):
        error = {} if o.error_message is None else {"errorMessage": o.error_message}
        return {
            "role": "assistant", "content": to_json(o.content), "provider": o.provider, "model": o.model,
            "usage": to_json(o.usage), "stopReason": o.stop_reason, **error, "timestamp": o.timestamp,
        }  # fmt: skip
    if isinstance(o, ToolResultMsg):
        details = {} if o.details is ABSENT else {"details": o.details}
        return {
            "role": "toolResult", "toolCallId": o.tool_call_id, "toolName": o.tool_name, "content": to_json(o.content),
            **details, "isError": o.is_error, "timestamp": o.timestamp,
        }  # fmt: skip
    sections = {} if o.sections is None else {"sections": dict(o.sections)}
    return {"role": "system", "content": o.content, **sections, "timestamp": o.timestamp}


def event_json(o: Start | TextDelta | ToolCallDelta | ToolCallEnd | Done | Failed) -> dict[str, Any]:
    """A model event's JSON form, its message or partial included."""
    if isinstance(o, Start):
        return {"type": "start", "partial": to_json(o.partial)}
    if isinstance(o, TextDelta | ToolCallDelta):
        kind = "text_delta" if isinstance(o, TextDelta) else "toolcall_delta"
        return {"type": kind, "contentIndex": o.index, "delta": o.delta, "partial": to_json(o.partial)}
    if isinstance(o, ToolCallEnd):
        return {"type": "toolcall_end", "contentIndex": o.index, "toolCall": to_json(o.tool_call), "partial": to_json(o.partial)}
    if isinstance(o, Done):
        return {"type": "done", "reason": o.reason, "message": to_json(o.message)}
    return {"type": "error", "reason": o.reason, "error": to_json(o.error)}
