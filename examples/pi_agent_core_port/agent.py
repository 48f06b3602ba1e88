"""The stateful ``Agent`` (spec/pi-agent-core-1/spec.md, section 7: PAC-AGENT), over this port's loop.

It owns the transcript and reduces it from the loop's events, runs one prompt at a time, keeps
the steering and follow-up queues (which outlive runs) and awaits its listeners, in order, for
every event: a listener that waits holds the run. A run whose loop raises ends with a failure
message instead of raising (PAC-AGENT-9). Options and state use snake_case names; messages are
upstream's camelCase dicts.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from ._pi_ai import pi_ai
from .clock import now_ms
from .declarations import to_tool_declaration
from .loop import run_agent_loop, run_agent_loop_continue

Listener = Callable[[dict[str, Any], Any], Any]
_ZERO_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
_ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
_LLM_ROLES = frozenset({"system", "user", "assistant", "toolResult"})
_BUSY_PROMPT = "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."


def _default_convert_to_llm(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [message for message in messages if message.get("role") in _LLM_ROLES]


class AgentState:
    """What the Agent holds between and during runs (PAC-AGENT-1, PAC-AGENT-3)."""

    def __init__(self, initial: dict[str, Any]) -> None:
        self.tools: list[Any] = list(initial.get("tools") or [])
        self.messages: list[dict[str, Any]] = list(initial.get("messages") or [])
        prompt, declared = initial.get("system_prompt") or "", [to_tool_declaration(tool) for tool in self.tools]
        if (prompt or declared) and (not self.messages or self.messages[0].get("role") != "system"):
            head: dict[str, Any] = {"role": "system", "content": prompt, **({"toolsAdded": declared} if declared else {}), "timestamp": 0}
            self.messages.insert(0, head)
        self.model: dict[str, Any] = initial.get("model") or {"id": "unknown", "api": "unknown", "provider": "unknown"}
        self.thinking_level: str = initial.get("thinking_level") or "off"
        self.is_streaming = False
        self.streaming_message: dict[str, Any] | None = None
        self.pending_tool_calls: frozenset[str] = frozenset()
        self.error_message: str | None = None

    @property
    def system_prompt(self) -> str:
        """The prompt the transcript's system messages replay to."""
        return str(pi_ai.get_current_system_prompt(self.messages))


class _Queue:
    """A pending-message queue: one message per drain, or all of them in mode ``all`` (PAC-AGENT-7)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.messages: list[dict[str, Any]] = []

    def peek(self) -> list[dict[str, Any]]:
        return list(self.messages) if self.mode == "all" else self.messages[:1]

    def drain(self) -> list[dict[str, Any]]:
        taken = self.peek()
        self.messages = self.messages[len(taken) :]
        return taken


class _Run:
    def __init__(self) -> None:
        self.controller = pi_ai.AbortController()
        self.idle: asyncio.Future[None] = asyncio.get_running_loop().create_future()


class Agent:
    """``new Agent(options)``: ``stream_fn``, ``initial_state``, queue modes, ``tool_execution`` and the tool hooks."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.state = AgentState(options.get("initial_state") or {})
        self._stream_fn = options["stream_fn"]
        self._convert_to_llm = options.get("convert_to_llm") or _default_convert_to_llm
        self._hooks = {name: options[name] for name in ("before_tool_call", "after_tool_call") if options.get(name) is not None}
        self.tool_execution: str = options.get("tool_execution") or "parallel"
        self._steering = _Queue(options.get("steering_mode") or "one-at-a-time")
        self._follow_up = _Queue(options.get("follow_up_mode") or "one-at-a-time")
        self._listeners: list[Listener] = []
        self._run: _Run | None = None

    # -- listeners, queues, signal -------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; the function returned removes it (PAC-AGENT-10)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    @property
    def steering_mode(self) -> str:
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: str) -> None:
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> str:
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: str) -> None:
        self._follow_up.mode = mode

    def steer(self, message: dict[str, Any]) -> None:
        self._steering.messages.append(message)

    def follow_up(self, message: dict[str, Any]) -> None:
        self._follow_up.messages.append(message)

    def clear_steering_queue(self) -> None:
        self._steering.messages = []

    def clear_follow_up_queue(self) -> None:
        self._follow_up.messages = []

    def clear_all_queues(self) -> None:
        self.clear_steering_queue()
        self.clear_follow_up_queue()

    def has_queued_messages(self) -> bool:
        return bool(self._steering.messages or self._follow_up.messages)

    def peek_queued_messages(self) -> list[dict[str, Any]]:
        return self._steering.peek() or self._follow_up.peek()

    @property
    def signal(self) -> Any:
        """The active run's signal, None while idle (PAC-AGENT-8)."""
        return None if self._run is None else self._run.controller.signal

    def abort(self) -> None:
        if self._run is not None:
            self._run.controller.abort()

    async def wait_for_idle(self) -> None:
        """Once the active run is over, its last listeners included (PAC-AGENT-12)."""
        if self._run is not None:
            await asyncio.shield(self._run.idle)

    def reset(self) -> None:
        """Keep only the replayed system message; empty the queues (PAC-AGENT-13)."""
        if self._run is not None:
            raise RuntimeError("Agent is already processing. Wait for completion before resetting.")
        baseline = pi_ai.get_current_system_message(self.state.messages)
        self.state.messages = [baseline] if baseline else []
        self.state.is_streaming, self.state.streaming_message, self.state.error_message = False, None, None
        self.state.pending_tool_calls = frozenset()
        self.clear_all_queues()

    # -- runs ----------------------------------------------------------------------------------

    async def prompt(self, value: str | dict[str, Any] | list[dict[str, Any]]) -> None:
        """Run from a text, a message or messages (PAC-AGENT-2); busy: raises (PAC-AGENT-4)."""
        if self._run is not None:
            raise RuntimeError(_BUSY_PROMPT)
        if isinstance(value, str):
            messages = [{"role": "user", "content": [{"type": "text", "text": value}], "timestamp": now_ms()}]
        else:
            messages = list(value) if isinstance(value, list) else [value]
        await self._lifecycle(
            lambda signal, config: run_agent_loop(messages, self._snapshot(), config, self._process, signal, self._stream_fn)
        )

    async def continue_(self) -> None:
        """Continue the transcript, or run what the queues hold after an assistant message (PAC-AGENT-5)."""
        if self._run is not None:
            raise RuntimeError("Agent is already processing. Wait for completion before continuing.")
        messages = self.state.messages
        if not messages or all(message.get("role") == "system" for message in messages):
            raise RuntimeError("No messages to continue from")
        if messages[-1].get("role") != "assistant":
            await self._lifecycle(
                lambda signal, config: run_agent_loop_continue(self._snapshot(), config, self._process, signal, self._stream_fn)
            )
            return
        queued, skip = self._steering.drain(), True
        if not queued:
            queued, skip = self._follow_up.drain(), False
        if not queued:
            raise RuntimeError("Cannot continue from message role: assistant")
        run = lambda signal, config: run_agent_loop(queued, self._snapshot(), config, self._process, signal, self._stream_fn)  # noqa: E731
        await self._lifecycle(run, skip_first_steering_poll=skip)

    def _snapshot(self) -> dict[str, Any]:
        return {"messages": list(self.state.messages), "tools": list(self.state.tools)}

    def _config(self, skip_first_steering_poll: bool) -> dict[str, Any]:
        skip = [skip_first_steering_poll]

        async def steering() -> list[dict[str, Any]]:
            if skip[0]:  # the steered message continue() runs is this run's prompt already
                skip[0] = False
                return []
            return self._steering.drain()

        async def follow_ups() -> list[dict[str, Any]]:
            return self._follow_up.drain()

        level = self.state.thinking_level
        config: dict[str, Any] = {"model": self.state.model, "convert_to_llm": self._convert_to_llm, "tool_execution": self.tool_execution}
        if level != "off":
            config["reasoning"] = level
        return {**config, **self._hooks, "get_steering_messages": steering, "get_follow_up_messages": follow_ups}

    async def _lifecycle(self, start: Callable[[Any, dict[str, Any]], Any], skip_first_steering_poll: bool = False) -> None:
        run = self._run = _Run()
        self.state.is_streaming, self.state.streaming_message, self.state.error_message = True, None, None
        try:
            await start(run.controller.signal, self._config(skip_first_steering_poll))
        except Exception as error:  # the run ends with a failure message instead (PAC-AGENT-9)
            await self._fail(error, bool(run.controller.signal.aborted))
        finally:
            self.state.is_streaming, self.state.streaming_message = False, None
            self.state.pending_tool_calls = frozenset()
            run.idle.set_result(None)
            self._run = None

    async def _fail(self, error: Exception, aborted: bool) -> None:
        model = self.state.model
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": ""}],
            "api": model.get("api"),
            "provider": model.get("provider"),
            "model": model.get("id"),
            "usage": {**_ZERO_USAGE, "cost": dict(_ZERO_COST)},
            "stopReason": "aborted" if aborted else "error",
            "errorMessage": str(error),
            "timestamp": now_ms(),
        }
        await self._process({"type": "message_start", "message": message})
        await self._process({"type": "message_end", "message": message})
        await self._process({"type": "turn_end", "message": message, "toolResults": []})
        await self._process({"type": "agent_end", "messages": [message]})

    async def _process(self, event: dict[str, Any]) -> None:
        """Reduce the state from the event, then await every listener in order (PAC-AGENT-3, PAC-AGENT-10)."""
        kind, state = event["type"], self.state
        if kind in ("message_start", "message_update"):
            state.streaming_message = event["message"]
        elif kind == "message_end":
            state.streaming_message = None
            state.messages.append(event["message"])
        elif kind == "tool_execution_start":
            state.pending_tool_calls = state.pending_tool_calls | {event["toolCallId"]}
        elif kind == "tool_execution_end":
            state.pending_tool_calls = state.pending_tool_calls - {event["toolCallId"]}
        elif kind == "turn_end" and event["message"].get("role") == "assistant" and event["message"].get("errorMessage"):
            state.error_message = event["message"]["errorMessage"]
        elif kind == "agent_end":
            state.streaming_message = None
        signal = self.signal
        for listener in list(self._listeners):
            if listener not in self._listeners:
                continue  # unsubscribed by an earlier listener of this very event
            returned = listener(event, signal)
            if inspect.isawaitable(returned):
                await returned
