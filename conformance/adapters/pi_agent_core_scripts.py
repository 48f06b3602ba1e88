"""What a pi-agent-core-1 case scripts, in process: the model, the tools, the hooks, the queues, and their gates.

The Python counterpart of ``node/agent_scenario.mjs`` (spec/fixture-format.md, "Agent
scenarios"). Everything here is the adapter's own, never the port's: the port only ever gets a
stream function, tools, a config of callables, and values through the binding's ``to_impl``.

- :func:`stream_fn` plays the case's model turns into the port's own
  ``AssistantMessageEventStream``, shaped as pi-ai 1.6.0's faux provider shapes them, and
  records every request's messages.
- :class:`ScriptedTool` is an ``AgentTool`` whose ``execute`` plays a script (``wait``,
  ``progress``, ``abort``, ``return``, ``throw``) and records what it received.
- :func:`scripted_hook` and :func:`scripted_queue` answer ``beforeToolCall`` /
  ``afterToolCall`` per tool call id and ``getSteeringMessages`` / ``getFollowUpMessages`` poll
  by poll, recording each call.
- :class:`AgentWorld` is what they share with the steps: gates, the run's controller and
  signal, the events as JSON, and every record.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.interface import HarnessError
from conformance.adapters.loop_scripts import ScriptedError, ScriptedParts
from conformance.adapters.pi_ai_binding import field_of
from conformance.common.jsontypes import JsonObject, JsonValue

ZERO_USAGE: JsonObject = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}

#: The model a config carries unless the case gives one (the Node adapter's default).
DEFAULT_MODEL: JsonObject = {
    "id": "scripted-1",
    "name": "scripted",
    "api": "scripted",
    "provider": "scripted",
    "baseUrl": "",
    "reasoning": False,
    "input": ["text"],
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    "contextWindow": 1000,
    "maxTokens": 100,
}

_LLM_ROLES = frozenset({"user", "assistant", "toolResult", "system"})


@dataclass
class AgentWorld(ScriptedParts):
    """What the scripted parts of one case share with its steps and its observation."""

    events: list[JsonValue] = field(default_factory=list)
    requests: list[JsonObject] = field(default_factory=list)
    received: list[JsonObject] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    hooks: list[JsonObject] = field(default_factory=list)
    polls: dict[str, int] = field(default_factory=lambda: {"steering": 0, "follow_up": 0})
    #: Gated turns waiting for their ``complete`` step (kept, so that the loop does not lose them).
    pending: list[asyncio.Future[None]] = field(default_factory=list)
    #: The first event ``to_json`` could not serialize (the case then fails with it).
    bad_event: str | None = None

    def abort(self) -> None:
        """Abort the run's controller (a run without a signal has none: nothing to abort)."""
        if self.controller is not None:
            self.controller.abort()

    def identity(self, given: Any) -> str:
        """``same`` for the run's own signal, ``absent`` for none, ``other`` for any other object."""
        if given is None:
            return "absent"
        return "same" if self.signal is not None and given is self.signal else "other"

    def record(self, event: Any) -> None:
        """One event the loop emitted, as JSON now (later changes to the port's object must not show)."""
        try:
            self.events.append(self.to_json(event, "an event the loop emitted"))
        except Exception as error:  # the case fails with it once the run is over; the loop goes on
            self.bad_event = self.bad_event or str(error)

    def emit(self, event: Any) -> _Done:
        """The ``emit`` a ``run_*`` entry gets: records at once; ``await emit(event)`` works too (upstream awaits it)."""
        self.record(event)
        return _Done()

    def content(self, value: JsonValue) -> Any:
        """A result-like ``{content, details, ...}`` with its content blocks through ``to_impl``, the rest copied."""
        if not isinstance(value, dict):
            return copy.deepcopy(value)
        made: dict[str, Any] = copy.deepcopy(value)
        if isinstance(value.get("content"), list):
            made["content"] = self.to_impl(value["content"])
        return made


def read(value: Any, name: str) -> Any:
    """``value``'s field ``name`` (upstream's camelCase) or its snake_case form, as a dict key or an attribute."""
    found = field_of(value, name)
    if found is None and isinstance(value, dict):
        found = value.get("".join(f"_{char.lower()}" if char.isupper() else char for char in name))
    return found


class _Done:
    """An already finished awaitable: what ``emit`` returns, so that awaiting it never yields to the loop."""

    def __await__(self) -> Iterator[None]:
        return iter(())


def convert_to_llm(messages: Any) -> Any:
    """The config's ``convert_to_llm``: the messages of the four LLM roles, in order (a plain function, not async)."""
    return [message for message in messages if field_of(message, "role") in _LLM_ROLES]


# -- the scripted model --------------------------------------------------------------------


def _turn_events(message: JsonObject, aborted: bool) -> list[JsonObject]:
    """The events of one scripted turn (pi-ai 1.6.0 ``dist/providers/faux.js`` shapes), and last the ``end`` value."""
    partial: JsonObject = {**message, "content": [], "stopReason": "pending"}
    if aborted:
        failed = {**partial, "stopReason": "aborted", "errorMessage": "Request was aborted"}
        return [{"type": "error", "reason": "aborted", "error": failed}, failed]
    events: list[JsonObject] = [{"type": "start", "partial": copy.deepcopy(partial)}]
    blocks: list[JsonValue] = []
    content: Any = message.get("content") or []
    for index, block in enumerate(content):
        blocks.append(block)
        kind = "toolcall" if block.get("type") == "toolCall" else str(block.get("type"))
        delta = block.get("text") if kind == "text" else block.get("thinking") if kind == "thinking" else _js_json(block.get("arguments"))
        events.append({"type": f"{kind}_start", "contentIndex": index, "partial": _snapshot(partial, blocks)})
        events.append({"type": f"{kind}_delta", "contentIndex": index, "delta": delta, "partial": _snapshot(partial, blocks)})
        end: JsonObject = {"type": f"{kind}_end", "contentIndex": index, "partial": _snapshot(partial, blocks)}
        if kind == "toolcall":
            end["toolCall"] = copy.deepcopy(block)
        else:
            end["content"] = delta
        events.append(end)
    final = copy.deepcopy(message)
    if final.get("stopReason") in ("error", "aborted"):
        events.append({"type": "error", "reason": final["stopReason"], "error": final})
    else:
        events.append({"type": "done", "reason": final.get("stopReason"), "message": final})
    return [*events, copy.deepcopy(final)]


def _snapshot(partial: JsonObject, blocks: list[JsonValue]) -> JsonObject:
    """The partial message with the blocks so far: each event its own copy."""
    return copy.deepcopy({**partial, "content": blocks})


def _js_json(value: JsonValue) -> str:
    """``JSON.stringify`` of tool-call arguments (the fixtures' arguments hold strings and integers only)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _missing_turn(index: int, model: Any) -> JsonObject:
    model_id = field_of(model, "id")
    return {
        "role": "assistant",
        "content": [],
        "api": "scripted",
        "provider": "scripted",
        "model": model_id if isinstance(model_id, str) else "scripted",
        "usage": copy.deepcopy(ZERO_USAGE),
        "stopReason": "error",
        "errorMessage": f"scripted model: no turn {index + 1}",
        "timestamp": 0,
    }


def stream_fn(turns: list[JsonValue], world: AgentWorld, new_stream: Callable[[], Any]) -> Callable[..., Any]:
    """The scripted model: ``stream_fn(model, context, options=None)`` plays the next turn into ``new_stream()``'s stream.

    The request's messages are recorded first; a ``{throw: M}`` turn raises at once; a gated
    turn plays when its ``complete`` step opens the gate. An aborted ``signal`` in the options
    (unless the turn says ``honor_abort: false``) is answered with an ``aborted`` error.
    """

    def stream(model: Any, context: Any, options: Any = None) -> Any:
        index = len(world.requests)
        world.requests.append({"messages": world.to_json(field_of(context, "messages"), "the request's messages")})
        turn = turns[index] if index < len(turns) else None
        if isinstance(turn, dict) and "throw" in turn:
            raise ScriptedError(str(turn["throw"]))
        events_stream = new_stream()

        def play() -> None:
            if not isinstance(turn, dict) or not isinstance(turn.get("message"), dict):
                missing = _missing_turn(index, model)
                values: list[JsonObject] = [{"type": "error", "reason": "error", "error": missing}, missing]
            else:
                signal = field_of(options, "signal")
                aborted = turn.get("honor_abort") is not False and bool(field_of(signal, "aborted"))
                values = _turn_events(turn["message"], aborted)  # type: ignore[arg-type]
            *events, final = values
            for event in events:
                events_stream.push(world.to_impl(event))
            events_stream.end(world.to_impl(final))

        if isinstance(turn, dict) and isinstance(turn.get("gate"), str):
            gate = world.gate(f"turn:{turn['gate']}")

            async def play_when_open() -> None:
                await gate.wait()
                play()

            world.pending.append(asyncio.ensure_future(play_when_open()))
        else:
            play()
        return events_stream

    return stream


# -- tools, hooks, queues ------------------------------------------------------------------


class ScriptedTool:
    """An ``AgentTool``: ``name``, ``label``, ``description``, ``parameters``, ``execution_mode`` and ``execute``."""

    def __init__(self, spec: JsonObject, world: AgentWorld) -> None:
        if not isinstance(spec.get("name"), str):
            raise HarnessError(f"a scripted tool needs a name, not {spec!r}")
        self.name = str(spec["name"])
        self.label = str(spec.get("label", self.name))
        self.description = str(spec.get("description", self.name))
        self.parameters: JsonValue = copy.deepcopy(spec.get("parameters", {"type": "object", "properties": {}}))
        mode = spec.get("execution_mode")
        self.execution_mode: str | None = None if mode is None else str(mode)
        default: list[JsonValue] = [{"return": {"content": [{"type": "text", "text": "ok"}], "details": {}}}]
        script = spec.get("script")
        self._script: list[JsonValue] = list(script) if isinstance(script, list) else default
        self._world = world

    async def execute(self, tool_call_id: Any, params: Any, signal: Any = None, on_update: Any = None) -> Any:
        """Record what it was given, then play the script: its ``return`` value, or ``{content: [], details: {}}``."""
        world = self._world
        world.received.append(
            {
                "tool": self.name,
                "call_id": tool_call_id if isinstance(tool_call_id, str) else repr(tool_call_id),
                "params": world.to_json(params, "the tool's params"),
                "signal": world.identity(signal),
                "on_update": "function" if callable(on_update) else "absent",
            }
        )
        world.started.extend([self.name, str(tool_call_id)])
        for action in self._script:
            if not isinstance(action, dict):
                raise HarnessError(f"a tool action is a mapping, not {action!r}")
            if "wait" in action:
                await world.gate(f"tool:{action['wait']}").wait()
            elif "progress" in action:
                if callable(on_update):
                    on_update(world.content(action["progress"]))
            elif "abort" in action:
                world.abort()
            elif "throw" in action:
                raise ScriptedError(str(action["throw"]))
            elif "return" in action:
                return world.content(action["return"])
            else:
                raise HarnessError(f"unknown tool action {sorted(action)}")
        return {"content": [], "details": {}}


def scripted_hook(name: str, table: JsonValue, world: AgentWorld) -> Callable[[Any, Any], Awaitable[Any]]:
    """``before_tool_call`` / ``after_tool_call``: per tool call id, what it returns (or throws, or aborts)."""
    if not isinstance(table, dict):
        raise HarnessError(f"{name}_tool_call must be a mapping of tool call ids")

    async def hook(context: Any, signal: Any = None) -> Any:
        call_id = read(read(context, "toolCall"), "id")
        record: JsonObject = {"hook": name, "toolCallId": world.to_json(call_id, "the hook's tool call id")}
        record["args"] = world.to_json(read(context, "args"), "the hook's args")
        if name == "after":
            record["isError"] = world.to_json(read(context, "isError"), "the hook's isError")
        # As the Node adapter: the run's own signal is "same" even when both are absent (a run without one).
        record["signal"] = "same" if signal is world.signal else world.identity(signal)
        world.hooks.append(record)
        answer = table.get(str(call_id))
        if isinstance(answer, dict) and "throw" in answer:
            raise ScriptedError(str(answer["throw"]))
        if isinstance(answer, dict) and answer.get("abort") is True:
            world.abort()
            return None
        return None if answer is None else world.content(answer)

    return hook


def scripted_queue(name: str, polls: JsonValue, world: AgentWorld) -> Callable[[], Awaitable[Any]]:
    """A queue poll: each call returns the next list of ``polls`` (then ``[]``), each message through ``to_impl``."""
    if not isinstance(polls, list):
        raise HarnessError(f"{name} must be a list of polls")

    async def poll() -> Any:
        index = world.polls[name]
        world.polls[name] = index + 1
        return world.to_impl(polls[index] if index < len(polls) else [])

    return poll


def trace_line(event: JsonValue) -> str:
    """A compact line per event: its type, and the role, assistant event or tool call id it is about."""
    if not isinstance(event, dict):
        return repr(event)
    kind = str(event.get("type"))
    if kind.startswith("message_"):
        message = event.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        update = event.get("assistantMessageEvent")
        what = update.get("type") if kind == "message_update" and isinstance(update, dict) else role
        return f"{kind}:{'undefined' if what is None else what}"
    if kind.startswith("tool_execution_"):
        return f"{kind}:{event.get('toolCallId')}"
    return kind
