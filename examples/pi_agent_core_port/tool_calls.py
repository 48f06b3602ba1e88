"""Tool execution (spec/pi-agent-core-1/spec.md, sections 2, 3 and 5: PAC-TOOL, PAC-HOOK, PAC-ABORT-2/3).

A batch runs in parallel by default: a sequential preflight (``tool_execution_start``, lookup,
validation, ``before_tool_call``) call by call, then every prepared call at once; end events come
in completion order, the tool-result messages afterwards in call order. Sequential execution runs
each call to its result message before the next starts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .clock import elapsed_ms, now_ms
from .validation import validate_tool_arguments

Emit = Callable[[dict[str, Any]], Awaitable[None]]

TRUNCATED = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments may be truncated.'
    " Re-issue the tool call with complete arguments."
)


@dataclass
class Finalized:
    """One call's outcome: its result (``content``, ``details``, maybe ``terminate``), whether it is an error, how long it ran."""

    tool_call: dict[str, Any]
    result: dict[str, Any]
    is_error: bool
    duration_ms: int | None = None


@dataclass
class Prepared:
    """A call ready to execute: its tool and validated arguments."""

    tool_call: dict[str, Any]
    tool: Any
    args: Any


def error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "details": {}}


def _aborted(signal: Any) -> bool:
    return bool(getattr(signal, "aborted", False))


def _message_of(error: BaseException) -> str:
    return str(error)


async def _start(tool_call: dict[str, Any], emit: Emit) -> None:
    event = {"type": "tool_execution_start", "toolCallId": tool_call["id"], "toolName": tool_call["name"], "args": tool_call["arguments"]}
    await emit(event)


async def _end(finalized: Finalized, emit: Emit) -> None:
    call = finalized.tool_call
    event = {"type": "tool_execution_end", "toolCallId": call["id"], "toolName": call["name"], "result": finalized.result}
    event["isError"] = finalized.is_error
    if finalized.duration_ms is not None:
        event["durationMs"] = finalized.duration_ms
    await emit(event)


async def _result_message(finalized: Finalized, emit: Emit) -> dict[str, Any]:
    """The call's tool-result message, emitted (``message_start`` and ``message_end``)."""
    call, result = finalized.tool_call, finalized.result
    message: dict[str, Any] = {"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"]}
    message["content"] = result.get("content") or []
    message["details"] = result.get("details")
    if result.get("usage") is not None:
        message["usage"] = result["usage"]
    message["isError"] = finalized.is_error
    if finalized.duration_ms is not None:
        message["durationMs"] = finalized.duration_ms
    message["timestamp"] = now_ms()
    await emit({"type": "message_start", "message": message})
    await emit({"type": "message_end", "message": message})
    return message


async def _prepare(
    context: dict[str, Any], assistant: dict[str, Any], call: dict[str, Any], config: dict[str, Any], signal: Any
) -> Prepared | Finalized:
    """Lookup, validation and ``before_tool_call``; an immediate result instead when the call must not execute."""
    if _aborted(signal):
        return Finalized(call, error_result("Operation aborted"), True)
    tool = next((tool for tool in context.get("tools") or [] if tool.name == call["name"]), None)
    if tool is None:
        return Finalized(call, error_result(f"Tool {call['name']} not found"), True)
    try:
        args = validate_tool_arguments(tool, call)
        before = config.get("before_tool_call")
        if before is not None:
            verdict = await before({"assistantMessage": assistant, "toolCall": call, "args": args, "context": context}, signal)
            if _aborted(signal):
                return Finalized(call, error_result("Operation aborted"), True)
            if verdict and verdict.get("block"):
                result = error_result(verdict.get("reason") or "Tool execution was blocked")
                if verdict.get("terminate") is True:
                    result["terminate"] = True
                return Finalized(call, result, True)
    except Exception as error:
        return Finalized(call, error_result(_message_of(error)), True)
    return Prepared(call, tool, args)


async def _execute(prepared: Prepared, signal: Any, emit: Emit) -> Finalized:
    """Run the tool; each ``on_update`` becomes a ``tool_execution_update`` before the end event."""
    call = prepared.tool_call
    updates: list[Awaitable[None]] = []
    accepting = True

    def on_update(partial_result: Any) -> None:
        if accepting:
            event = {"type": "tool_execution_update", "toolCallId": call["id"], "toolName": call["name"], "args": call["arguments"]}
            event["partialResult"] = partial_result
            updates.append(emit(event))

    started = time.perf_counter()
    try:
        result = await prepared.tool.execute(call["id"], prepared.args, signal, on_update)
        outcome = Finalized(call, result, result.get("isError") is True, elapsed_ms(started))
    except Exception as error:
        outcome = Finalized(call, error_result(_message_of(error)), True, elapsed_ms(started))
    accepting = False
    for update in updates:
        await update
    return outcome


async def _finalize(
    context: dict[str, Any], assistant: dict[str, Any], prepared: Prepared, executed: Finalized, config: dict[str, Any], signal: Any
) -> Finalized:
    """``after_tool_call``: each field it returns replaces the result's; a raise makes an error result."""
    after = config.get("after_tool_call")
    if after is None:
        return executed
    result, is_error = executed.result, executed.is_error
    hook_context = {"assistantMessage": assistant, "toolCall": prepared.tool_call, "args": prepared.args, "result": result}
    try:
        change = await after({**hook_context, "isError": is_error, "context": context}, signal)
        if change:
            result = dict(result)
            for key in ("content", "details", "usage", "terminate"):
                if change.get(key) is not None:
                    result[key] = change[key]
            is_error = change["isError"] if change.get("isError") is not None else is_error
    except Exception as error:
        result, is_error = error_result(_message_of(error)), True
    return Finalized(prepared.tool_call, result, is_error, executed.duration_ms)


def _terminates(batch: list[Finalized]) -> bool:
    return bool(batch) and all(finalized.result.get("terminate") is True for finalized in batch)


async def fail_truncated(calls: list[dict[str, Any]], emit: Emit) -> tuple[list[dict[str, Any]], bool]:
    """A ``length`` turn: no call executes; each gets start and end events and an error result (PAC-TOOL-7)."""
    messages = []
    for call in calls:
        await _start(call, emit)
        finalized = Finalized(call, error_result(TRUNCATED.format(name=call["name"])), True)
        await _end(finalized, emit)
        messages.append(await _result_message(finalized, emit))
    return messages, False


async def execute_tool_calls(
    context: dict[str, Any], assistant: dict[str, Any], config: dict[str, Any], signal: Any, emit: Emit
) -> tuple[list[dict[str, Any]], bool]:
    """Run the assistant message's tool calls: (their tool-result messages in call order, whether the batch ends the run)."""
    calls = [block for block in assistant["content"] if block.get("type") == "toolCall"]
    tools = {tool.name: tool for tool in context.get("tools") or []}
    sequential = config.get("tool_execution") == "sequential" or any(
        getattr(tools.get(call["name"]), "execution_mode", None) == "sequential" for call in calls
    )
    run = _sequential if sequential else _parallel
    return await run(context, assistant, calls, config, signal, emit)


async def _sequential(
    context: dict[str, Any], assistant: dict[str, Any], calls: list[dict[str, Any]], config: dict[str, Any], signal: Any, emit: Emit
) -> tuple[list[dict[str, Any]], bool]:
    batch, messages = [], []
    for call in calls:
        await _start(call, emit)
        outcome = await _prepare(context, assistant, call, config, signal)
        if isinstance(outcome, Prepared):
            outcome = await _finalize(context, assistant, outcome, await _execute(outcome, signal, emit), config, signal)
        await _end(outcome, emit)
        messages.append(await _result_message(outcome, emit))
        batch.append(outcome)
    return messages, _terminates(batch)


async def _parallel(
    context: dict[str, Any], assistant: dict[str, Any], calls: list[dict[str, Any]], config: dict[str, Any], signal: Any, emit: Emit
) -> tuple[list[dict[str, Any]], bool]:
    entries: list[Finalized | Prepared] = []
    for call in calls:  # the sequential preflight
        await _start(call, emit)
        prepared = await _prepare(context, assistant, call, config, signal)
        if isinstance(prepared, Finalized):
            await _end(prepared, emit)
        entries.append(prepared)

    async def run(entry: Finalized | Prepared) -> Finalized:
        if isinstance(entry, Finalized):
            return entry
        if _aborted(signal):
            finalized = Finalized(entry.tool_call, error_result("Operation aborted"), True)
        else:
            finalized = await _finalize(context, assistant, entry, await _execute(entry, signal, emit), config, signal)
        await _end(finalized, emit)
        return finalized

    batch = list(await asyncio.gather(*(run(entry) for entry in entries)))
    messages = [await _result_message(finalized, emit) for finalized in batch]
    return messages, _terminates(batch)
