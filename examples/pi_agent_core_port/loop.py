"""The agent loop (spec/pi-agent-core-1/spec.md, sections 1 and 4: PAC-LOOP, PAC-CONT, PAC-REQ, PAC-FINISH, PAC-NEXT, PAC-XFORM, PAC-QUEUE).

``run_agent_loop`` and ``run_agent_loop_continue`` await ``emit`` for every event and return the
new messages; ``agent_loop`` and ``agent_loop_continue`` return an ``EventStream`` of the same
events whose ``result()`` is the new messages. A turn: the prepared and queued messages (with
any tool declaration), one request, its tool calls; the run ends after a turn without tool calls
when no queue yields messages (and ``finish_turn`` asks for no more), when ``finish_turn`` says
``end``, or at once after an ``error`` or ``aborted`` answer.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ._pi_ai import pi_ai
from .declarations import declare_tool_changes
from .tool_calls import Emit, execute_tool_calls, fail_truncated

StreamFn = Callable[[Any, dict[str, Any], dict[str, Any]], Any]
_UPDATES = frozenset(f"{kind}_{part}" for kind in ("text", "thinking", "toolcall") for part in ("start", "delta", "end"))
_RUNS: set[asyncio.Task[Any]] = set()  # runs behind a stream, kept alive until they finish


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _poll(config: dict[str, Any], name: str) -> list[Any]:
    poll = config.get(name)
    return list(await poll() or []) if poll is not None else []


async def _emit_messages(messages: list[dict[str, Any]], emit: Emit) -> None:
    for message in messages:
        await emit({"type": "message_start", "message": message})
        await emit({"type": "message_end", "message": message})


async def run_agent_loop(
    prompts: list[dict[str, Any]], context: dict[str, Any], config: dict[str, Any], emit: Emit, signal: Any, stream_fn: StreamFn
) -> list[dict[str, Any]]:
    """Run from new prompts; the new messages (the prompts, with any declaration, then every appended message)."""
    initial = declare_tool_changes(context, prompts)
    new_messages = list(initial)
    current = {**context, "messages": [*context["messages"], *initial]}  # the caller's list stays as it was
    await emit({"type": "agent_start"})
    await emit({"type": "turn_start"})
    await _emit_messages(initial, emit)
    await _run_loop(current, new_messages, config, signal, emit, stream_fn)
    return new_messages


def _check_continuable(context: dict[str, Any]) -> None:
    if not context["messages"]:
        raise ValueError("Cannot continue: no messages in context")
    if context["messages"][-1].get("role") == "assistant":
        raise ValueError("Cannot continue from message role: assistant")


async def run_agent_loop_continue(
    context: dict[str, Any], config: dict[str, Any], emit: Emit, signal: Any, stream_fn: StreamFn
) -> list[dict[str, Any]]:
    """Continue the caller's transcript as it is; it grows by every appended message (a shallow copy, PAC-CONT-2)."""
    _check_continuable(context)
    new_messages: list[dict[str, Any]] = []
    await emit({"type": "agent_start"})
    await emit({"type": "turn_start"})
    await _run_loop({**context}, new_messages, config, signal, emit, stream_fn)
    return new_messages


def _agent_stream(run: Callable[[Emit], Awaitable[list[dict[str, Any]]]]) -> Any:
    """An ``EventStream`` ending at ``agent_end`` whose result is the new messages; ``run`` pushes onto it."""
    stream = pi_ai.EventStream(lambda event: event["type"] == "agent_end", lambda event: event.get("messages", []))

    async def push(event: dict[str, Any]) -> None:
        stream.push(event)

    async def main() -> None:
        stream.end(await run(push))  # a rejected run leaves the stream open, as upstream's does

    task = asyncio.ensure_future(main())
    _RUNS.add(task)
    task.add_done_callback(_forget)
    return stream


def _forget(task: asyncio.Task[Any]) -> None:
    """A finished run behind a stream: dropped; its error retrieved (the stream never ends, as upstream's)."""
    _RUNS.discard(task)
    if not task.cancelled():
        task.exception()


def agent_loop(prompts: list[dict[str, Any]], context: dict[str, Any], config: dict[str, Any], signal: Any, stream_fn: StreamFn) -> Any:
    """``run_agent_loop`` as a stream of its events."""
    return _agent_stream(lambda emit: run_agent_loop(prompts, context, config, emit, signal, stream_fn))


def agent_loop_continue(context: dict[str, Any], config: dict[str, Any], signal: Any, stream_fn: StreamFn) -> Any:
    """``run_agent_loop_continue`` as a stream; raises before returning on a context it cannot continue."""
    _check_continuable(context)
    return _agent_stream(lambda emit: run_agent_loop_continue(context, config, emit, signal, stream_fn))


async def _call(config: dict[str, Any], name: str, *arguments: Any) -> Any:
    function = config.get(name)
    return await _maybe_await(function(*arguments)) if function is not None else None


@dataclass
class _Run:
    """What a run carries from turn to turn: the context and config in force, and what it still has to do."""

    context: dict[str, Any]
    config: dict[str, Any]
    new_messages: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    last_turn: dict[str, Any] | None = None
    #: finish_turn asked for one more request that no other turn has made yet (PAC-FINISH-3).
    continue_once: bool = False

    def update(self, update: Any) -> None:
        """A returned ``context``, ``model`` and ``thinkingLevel`` in force ("off" clears the level, PAC-REQ-2)."""
        if not update:
            return
        self.context = update.get("context") or self.context
        level = update.get("thinkingLevel")
        reasoning = self.config.get("reasoning") if level is None else None if level == "off" else level
        self.config = {**self.config, "model": update.get("model") or self.config["model"], "reasoning": reasoning}


async def _start_turn(run: _Run, emit: Emit) -> None:
    """The messages a turn starts with: after the first turn, prepare_next_turn's and a second steering poll (PAC-NEXT, PAC-QUEUE-3)."""
    prepared: list[dict[str, Any]] = []
    if run.last_turn is not None:
        update = await _call(run.config, "prepare_next_turn", run.last_turn)
        run.update(update)
        prepared = list(update.get("messages") or []) if update else []
        if not run.pending:  # steering queued while the turn was prepared
            run.pending = await _poll(run.config, "get_steering_messages")
        await emit({"type": "turn_start"})
    for message in declare_tool_changes(run.context, [*prepared, *run.pending]):
        await _emit_messages([message], emit)
        run.context["messages"].append(message)
        run.new_messages.append(message)
    run.pending = []


async def _turn(run: _Run, signal: Any, emit: Emit, stream_fn: StreamFn) -> bool | None:
    """One turn; whether the loop goes on with tool calls, or None when the run is over (agent_end emitted)."""
    await _start_turn(run, emit)
    request = {"context": run.context, "model": run.config["model"], "thinkingLevel": run.config.get("reasoning") or "off"}
    run.update(await _call(run.config, "prepare_request", request, signal))
    message = await _stream_assistant_response(run.context, run.config, signal, emit, stream_fn)
    run.new_messages.append(message)
    results: list[dict[str, Any]] = []
    failed = message.get("stopReason") in ("error", "aborted")
    calls = [] if failed else [block for block in message["content"] if block.get("type") == "toolCall"]
    more_tool_calls = False
    if calls:
        executed = fail_truncated(calls, emit) if message.get("stopReason") == "length" else None
        results, terminate = await (executed or execute_tool_calls(run.context, message, run.config, signal, emit))
        more_tool_calls = not terminate
        run.context["messages"].extend(results)
        run.new_messages.extend(results)
    run.last_turn = {"message": message, "toolResults": results, "context": run.context, "newMessages": run.new_messages}
    decision = await _call(run.config, "finish_turn", run.last_turn, signal)
    await emit({"type": "turn_end", "message": message, "toolResults": results})
    action = decision.get("action") if isinstance(decision, dict) else None
    if failed or action == "end":  # an error or aborted answer ends the run whatever finish_turn said
        await emit({"type": "agent_end", "messages": run.new_messages})
        return None
    run.pending = await _poll(run.config, "get_steering_messages")
    run.continue_once = action == "continue" and not (more_tool_calls or run.pending)
    return more_tool_calls


async def _run_loop(
    context: dict[str, Any], new_messages: list[dict[str, Any]], config: dict[str, Any], signal: Any, emit: Emit, stream_fn: StreamFn
) -> None:
    """Turns until the run ends: steering is polled at the start and after each turn, follow-ups when it would end.

    Between turns ``prepare_next_turn`` may replace the context, model or level and add messages
    (PAC-NEXT); before each request ``prepare_request`` may do the same but for messages (PAC-REQ);
    ``finish_turn`` may end the run or ask for one more request (PAC-FINISH).
    """
    run = _Run(context, config, new_messages, await _poll(config, "get_steering_messages"))
    while True:
        more_tool_calls: bool | None = True
        while more_tool_calls or run.pending:
            more_tool_calls = await _turn(run, signal, emit, stream_fn)
            if more_tool_calls is None:
                return
        run.pending = await _poll(run.config, "get_follow_up_messages")
        if not run.pending and not run.continue_once:
            break
        run.continue_once = False  # a follow-up's turn, or one turn on the context as it is
    await emit({"type": "agent_end", "messages": new_messages})


async def _stream_assistant_response(
    context: dict[str, Any], config: dict[str, Any], signal: Any, emit: Emit, stream_fn: StreamFn
) -> dict[str, Any]:
    """One request; its events become ``message_*`` events, its final message is appended and returned (PAC-LOOP-3, 4)."""
    messages = context["messages"]
    if config.get("transform_context") is not None:  # shapes this request only (PAC-XFORM-1)
        messages = await _maybe_await(config["transform_context"](messages, signal))
    llm_messages = await _maybe_await(config["convert_to_llm"](messages))
    response = await _maybe_await(stream_fn(config["model"], pi_ai.normalize_context({"messages": llm_messages}), {"signal": signal}))

    async def final() -> dict[str, Any]:
        message: dict[str, Any] = await response.result()
        message["thinkingLevel"] = config.get("reasoning") or "off"  # the requested level, whoever answered
        return message

    partial: dict[str, Any] | None = None
    async for event in response:
        kind = event["type"]
        if kind == "start":
            partial = event["partial"]
            context["messages"].append(partial)
            await emit({"type": "message_start", "message": {**partial}})
        elif kind in _UPDATES and partial is not None:
            partial = event["partial"]
            context["messages"][-1] = partial
            await emit({"type": "message_update", "assistantMessageEvent": event, "message": {**partial}})
        elif kind in ("done", "error"):
            break
    message = await final()
    if partial is not None:
        context["messages"][-1] = message
    else:
        context["messages"].append(message)
        await emit({"type": "message_start", "message": {**message}})
    await emit({"type": "message_end", "message": message})
    return message
