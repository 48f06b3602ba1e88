"""The ``agent`` operation of the pi-agent-core-1 binding: one port's ``Agent`` driven through a case's steps.

The Python counterpart of ``node/pi_agent_core_agent.mjs`` (spec/fixture-format.md, "The
upstream Agent"). The port exposes ``Agent(options)``, ``options`` a dict of snake_case names
(``stream_fn``, ``initial_state`` {``system_prompt``, ``model``, ``thinking_level``, ``tools``,
``messages``}, ``steering_mode``, ``follow_up_mode``, ``tool_execution``, ``before_tool_call``,
``after_tool_call``), each passed only when the case gives it (``stream_fn``, ``model`` and
``tools`` always). The Agent has ``state`` (``system_prompt``, ``thinking_level``, ``tools``,
``messages``, ``is_streaming``, ``streaming_message``, ``pending_tool_calls``,
``error_message``; attributes or keys), ``subscribe(listener)`` returning the function that
unsubscribes (a listener is ``listener(event, signal)`` and may return an awaitable), the
awaitables ``prompt(value)``, ``continue_()`` and ``wait_for_idle()``, and ``steer``,
``follow_up``, ``abort``, ``reset``, ``clear_steering_queue``, ``clear_follow_up_queue``,
``clear_all_queues``, ``has_queued_messages``, ``peek_queued_messages``, ``signal``,
``steering_mode`` and ``follow_up_mode`` (settable). A name it lacks skips the cases that use
it (docs/porting.md, "The pi-agent-core-1 binding").
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
from collections.abc import Callable
from typing import Any

from conformance.adapters.event_loop import run_coroutine, wait_until
from conformance.adapters.interface import HarnessError, ImplementationThrew, OperationNotSupported
from conformance.adapters.loop_binding import STEP_DEADLINE_S, parse_step
from conformance.adapters.loop_scripts import ScriptedError
from conformance.adapters.pi_agent_core_scripts import DEFAULT_MODEL, AgentWorld, scripted_hook, stream_fn, trace_line
from conformance.adapters.tool_binding import error_message
from conformance.common.jsontypes import JsonObject, JsonValue

#: Methods a step or an action calls that return nothing to await; the Agent's Python names.
_CONTROLS = {
    "abort": "abort",
    "steer": "steer",
    "follow_up": "follow_up",
    "reset": "reset",
    "clear_steering_queue": "clear_steering_queue",
    "clear_follow_up_queue": "clear_follow_up_queue",
    "clear_all_queues": "clear_all_queues",
}
_CALLS = {"prompt": "prompt", "continue": "continue_", "wait_for_idle": "wait_for_idle"}
_MODES = ("steering_mode", "follow_up_mode")
_STATE = {
    "systemPrompt": "system_prompt",
    "thinkingLevel": "thinking_level",
    "tools": "tools",
    "messages": "messages",
    "isStreaming": "is_streaming",
    "streamingMessage": "streaming_message",
    "pendingToolCalls": "pending_tool_calls",
    "errorMessage": "error_message",
}


def read(value: Any, name: str) -> Any:
    """``value.name`` or ``value[name]`` (None when neither)."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def fits(when: JsonObject, event: JsonValue) -> bool:
    """A subscriber's ``when`` (or an ``await_event``): the event's type, message role and tool call id."""
    if not isinstance(event, dict) or event.get("type") != when.get("type"):
        return False
    message = event.get("message")
    if "role" in when and (not isinstance(message, dict) or message.get("role") != when["role"]):
        return False
    return "toolCallId" not in when or event.get("toolCallId") == when["toolCallId"]


class AgentPlay:
    """One port Agent being driven: its scripted parts, its calls, and what was observed."""

    def __init__(self, ops: Any, input: JsonObject) -> None:
        self.ops = ops
        self.world = AgentWorld(ops.to_impl, ops.to_json, None, None)
        self.signals: list[JsonObject] = []
        self.calls: dict[str, JsonObject] = {}
        self.tasks: list[asyncio.Future[Any]] = []
        self.snapshots: JsonObject = {}
        self.actions: list[JsonValue] = []
        spec: Any = input
        self.subscribers: dict[str, dict[str, Any]] = {
            str(item["name"]): {"spec": item, "lines": [], "unsubscribe": None, "counts": {}} for item in spec.get("subscribers") or []
        }
        self.agent = self._construct(spec)
        self.world.controller = self.agent  # abort actions of tools and hooks abort the Agent's run
        self.ops._call_method(self.agent, "Agent", "subscribe", self._record)
        for name, subscriber in self.subscribers.items():
            if subscriber["spec"].get("subscribed", True) is not False:
                self.subscribe(name)

    def _construct(self, spec: Any) -> Any:
        return self.ops._call("Agent", self._options(spec))

    def _stream_fn(self, spec: Any) -> Any:
        """The scripted model, recording each request's signal (``signals``) and keeping it as the one tools compare with."""
        model: Any = spec.get("model") or {}
        streamer = stream_fn(list(model.get("turns") or []), self.world, self.ops._agent_stream_factory())

        def traced(chosen: Any, context: Any, options: Any = None) -> Any:
            signal = read(options, "signal")
            previous = self.world.signal
            identity = "absent" if signal is None else "first" if previous is None else "same" if signal is previous else "new"
            self.signals.append({"identity": identity, "aborted": bool(read(signal, "aborted"))})
            self.world.signal = signal if signal is not None else previous
            return streamer(chosen, context, options)

        return traced

    def _options(self, spec: Any) -> dict[str, Any]:
        """``Agent(options)``'s dict: what the case's ``agent`` settings give, the scripted model and tools."""
        settings: Any = spec.get("agent") or {}
        tools = [self.ops._agent_tool(item, self.world) for item in spec.get("tools") or []]
        initial: dict[str, Any] = {"model": copy.deepcopy(DEFAULT_MODEL), "tools": tools}
        initial.update({key: settings[key] for key in ("system_prompt", "thinking_level") if key in settings})
        if "messages" in settings:
            initial["messages"] = self.ops.to_impl(list(settings["messages"]))
        options: dict[str, Any] = {"stream_fn": self._stream_fn(spec), "initial_state": initial}
        options.update({key: settings[key] for key in ("steering_mode", "follow_up_mode", "tool_execution") if key in settings})
        for key, name in (("before_tool_call", "before"), ("after_tool_call", "after")):
            if key in settings:
                options[key] = scripted_hook(name, settings[key], self.world)
        return options

    # -- listeners -----------------------------------------------------------------------------

    def _record(self, event: Any, signal: Any = None) -> None:
        self.world.record(event)

    def subscribe(self, name: str) -> None:
        subscriber = self._subscriber(name)

        async def listener(event: Any, signal: Any = None) -> None:
            await self.deliver(subscriber, event, signal)

        subscriber["unsubscribe"] = self.ops._call_method(self.agent, "Agent", "subscribe", listener)

    def _subscriber(self, name: str) -> dict[str, Any]:
        if name not in self.subscribers:
            raise HarnessError(f"no subscriber {name!r}")
        return self.subscribers[name]

    async def deliver(self, subscriber: dict[str, Any], event: Any, signal: Any) -> None:
        """A scripted listener: its trace line, then each rule that names the event plays its actions, in order."""
        seen = self.ops.to_json(event, "an event a subscriber received")
        line = trace_line(seen)
        subscriber["lines"].append(line)
        for index, rule in enumerate(subscriber["spec"].get("rules") or []):
            when = rule.get("when") or {}
            if not fits(when, seen):
                continue
            count = subscriber["counts"][index] = subscriber["counts"].get(index, 0) + 1
            if "nth" in when and when["nth"] != count:
                continue
            for action in rule.get("do") or []:
                await self.act(str(subscriber["spec"]["name"]), line, action, seen, signal)

    # -- actions and steps ---------------------------------------------------------------------

    async def act(self, by: str, at: str | None, action: JsonValue, seen: JsonValue = None, signal: Any = None) -> None:
        """One action of a subscriber, or a step that acts (``by: steps``): what it threw is recorded."""
        name, value = parse_step(action)
        if name == "throw":
            raise ScriptedError(str(value))
        entry: JsonObject = {"by": by, "at": at, "action": name}
        if name == "wait":
            entry["gate"] = str(value)
            self.actions.append(entry)
            await self.world.gate(f"listener:{value}").wait()
            return
        if name in ("snapshot", "record", "subscribe", "unsubscribe"):
            self._observe(entry, value, seen, signal)
        elif name in _CALLS:
            entry["error"] = self.call(name, value)
            self.actions.append(entry)  # made before anything the call leads to
            await asyncio.sleep(0)  # as a JavaScript async function runs to its first await when called
            return
        elif name in _CONTROLS:
            entry["error"] = self._control(_CONTROLS[name], value)
        elif name in _MODES:
            entry["error"] = self._set_mode(name, str(value))
        else:
            raise HarnessError(f"unknown agent action {name!r}")
        self.actions.append(entry)

    def _observe(self, entry: JsonObject, value: JsonValue, seen: JsonValue, signal: Any) -> None:
        """``snapshot``, ``record``, ``subscribe`` and ``unsubscribe``: actions that call nothing the case observes fail."""
        name = entry["action"]
        if name == "snapshot":
            entry.update(self.view(with_calls=True))
        elif name == "record":
            entry["event"] = seen
            entry["signal"] = "absent" if signal is None else "same" if signal is read(self.agent, "signal") else "other"
        elif name == "subscribe":
            self.subscribe(str(value))
        else:
            unsubscribe = self._subscriber(str(value))["unsubscribe"]
            if callable(unsubscribe):
                unsubscribe()

    def _query(self, name: str) -> JsonValue:
        """What a reading method returns, as JSON; null when the port lacks it (a case that reads it then fails, not skips)."""
        found = getattr(self.agent, name, None)
        return None if not callable(found) else self.ops.to_json(self.ops._call_method(self.agent, "Agent", name), f"{name}()")

    def _method(self, name: str) -> Any:
        found = getattr(self.agent, name, None)
        if not callable(found):
            raise OperationNotSupported(f"{self.ops.name}: Agent has no {name}")
        return found

    def _control(self, method: str, value: JsonValue) -> str | None:
        function = self._method(method)
        arguments = [self.ops.to_impl(copy.deepcopy(value))] if method in ("steer", "follow_up") else []
        try:
            function(*arguments)
        except NotImplementedError as error:
            raise OperationNotSupported(f"{self.ops.name}: Agent.{method} is not implemented: {error}") from error
        except Exception as error:
            return error_message(error)
        return None

    def _set_mode(self, name: str, mode: str) -> str | None:
        if not hasattr(self.agent, name):
            raise OperationNotSupported(f"{self.ops.name}: Agent has no {name}")
        try:
            setattr(self.agent, name, mode)
        except Exception as error:
            return error_message(error)
        return None

    def call(self, kind: str, value: JsonValue) -> str | None:
        """``prompt``, ``continue_`` or ``wait_for_idle``, not awaited; what it raised at once, or None."""
        spec: Any = value if isinstance(value, dict) else ({"text": value} if kind == "prompt" else {} if value is None else {"as": value})
        name = str(spec.get("as", f"p{len(self.calls) + 1}"))
        if name in self.calls:
            raise HarnessError(f"two calls are named {name!r}")
        outcome: JsonObject = {"status": "pending", "error": None}
        self.calls[name] = outcome
        function = self._method(_CALLS[kind])
        arguments: list[Any] = []
        if kind == "prompt":
            given = spec["messages"] if "messages" in spec else spec["message"] if "message" in spec else str(spec.get("text", ""))
            arguments = [self.ops.to_impl(copy.deepcopy(given))]
        try:
            returned = function(*arguments)
            if not inspect.isawaitable(returned):
                raise ImplementationThrew(f"Agent.{_CALLS[kind]}() returned {type(returned).__name__}, not an awaitable")
            task = asyncio.ensure_future(returned)
        except NotImplementedError as error:
            raise OperationNotSupported(f"{self.ops.name}: Agent.{_CALLS[kind]} is not implemented: {error}") from error
        except Exception as error:
            outcome.update({"status": "rejected", "error": {"message": error_message(error)}})
            return error_message(error)
        self.tasks.append(task)
        task.add_done_callback(lambda done: _settle(outcome, done))
        return None

    def view(self, with_calls: bool = False) -> JsonObject:
        """The Agent's state, queues and signal now, as JSON (with each call's status, for snapshots)."""
        state = read(self.agent, "state")
        values: dict[str, Any] = {key: read(state, name) for key, name in _STATE.items()}
        values["tools"] = [read(tool, "name") for tool in values["tools"] or []]
        values["pendingToolCalls"] = sorted(values["pendingToolCalls"] or [])
        signal = read(self.agent, "signal")
        view: JsonObject = {
            "state": self.ops.to_json(values, "the Agent's state"),
            "queues": {
                "steeringMode": read(self.agent, "steering_mode"),
                "followUpMode": read(self.agent, "follow_up_mode"),
                "hasQueuedMessages": self._query("has_queued_messages"),
                "peek": self._query("peek_queued_messages"),
            },
            "signal": "absent" if signal is None else "aborted" if read(signal, "aborted") else "live",
        }
        if with_calls:
            view["calls"] = {name: outcome["status"] for name, outcome in self.calls.items()}
        return view

    async def step(self, name: str, value: JsonValue, deadline: float) -> str | None:
        """Play one step; what it waited for in vain, or None."""
        condition, what = self._waiting(name, value)
        if condition is not None:
            return None if await wait_until(condition, deadline) else what
        if name in ("release", "complete", "resume"):
            prefix = {"release": "tool", "complete": "turn", "resume": "listener"}[name]
            self.world.gate(f"{prefix}:{value}").set()
        elif name == "settle":
            await wait_until(lambda: False, deadline)  # returns once the loop is idle
        elif name == "snapshot":
            self.snapshots[str(value)] = self.view(with_calls=True)
        else:
            await self.act("steps", None, {name: value} if value is not None else name)
        return None

    def _waiting(self, name: str, value: JsonValue) -> tuple[Any, str]:
        if name == "await_prompt":
            outcome = self.calls.get(str(value))
            if outcome is None:
                raise HarnessError(f"no call {value!r} before this step")
            return (lambda: outcome["status"] != "pending"), f"call {value} to settle"
        if name == "await_request":
            count = int(value)  # type: ignore[arg-type]
            return (lambda: len(self.world.requests) >= count), f"model request {count} to start"
        if name == "await_started":
            names = [str(item) for item in value] if isinstance(value, list) else [str(value)]
            return (lambda: all(item in self.world.started for item in names)), f"tools {', '.join(names)} to start"
        if name == "await_event":
            wanted: Any = value
            return (lambda: any(fits(wanted, event) for event in self.world.events)), f"an event {_compact(wanted)}"
        return None, ""


def _settled_check(outcome: JsonObject) -> Callable[[], bool]:
    return lambda: outcome["status"] != "pending"


def _compact(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _settle(outcome: JsonObject, task: asyncio.Future[Any]) -> None:
    if task.cancelled():
        outcome.update({"status": "rejected", "error": {"message": "cancelled"}})
    elif task.exception() is not None:
        outcome.update({"status": "rejected", "error": {"message": error_message(task.exception())}})  # type: ignore[arg-type]
    else:
        outcome["status"] = "fulfilled"


class AgentOperation:
    """``agent``, for :class:`~conformance.adapters.pi_agent_core_binding.PiAgentCoreBindingAdapter` (which supplies the helpers)."""

    def agent(self, input: JsonObject) -> JsonObject:
        """Drive one ``Agent`` through the case's steps; its events, requests, calls, states and actions."""
        observation: JsonObject = run_coroutine(self._agent_class_play(input))
        return observation

    async def _agent_class_play(self, input: JsonObject) -> JsonObject:
        play = AgentPlay(self, input)
        deadline = max(self.settle_deadline_s, STEP_DEADLINE_S)  # type: ignore[attr-defined]
        steps: list[Any] = list(input.get("steps") or [])  # type: ignore[arg-type]
        stalled: JsonValue = None
        for index, step in enumerate(steps):
            waiting_for = await play.step(*parse_step(step), deadline)
            if waiting_for is not None:
                stalled = {"step": index, "waiting_for": waiting_for}
                break
        if stalled is None:  # every call is awaited at the end, in the order made
            for name, outcome in play.calls.items():
                if not await wait_until(_settled_check(outcome), deadline):
                    stalled = {"step": len(steps), "waiting_for": f"call {name} to settle"}
                    break
        for task in play.tasks:
            if task.cancelled():
                raise HarnessError("the port cancelled its own call (asyncio.CancelledError)")
            error = task.exception() if task.done() else None
            if error is not None and not isinstance(error, Exception):
                raise error  # the port's BaseException: the case errors with its name
        if play.world.bad_event is not None:
            raise ImplementationThrew(play.world.bad_event)
        return self._agent_class_observation(play, stalled)

    @staticmethod
    def _agent_class_observation(play: AgentPlay, stalled: JsonValue) -> JsonObject:
        final = play.view()
        return {
            "events": list(play.world.events),
            "trace": [trace_line(event) for event in play.world.events],
            "requests": list(play.world.requests),
            "signals": list(play.signals),
            "prompts": {name: dict(outcome) for name, outcome in play.calls.items()},
            "state": final["state"],
            "queues": final["queues"],
            "signal": final["signal"],
            "snapshots": play.snapshots,
            "deliveries": {name: list(subscriber["lines"]) for name, subscriber in play.subscribers.items()},
            "actions": list(play.actions),
            "received": list(play.world.received),
            "hooks": list(play.world.hooks),
            "stalled": stalled,
        }
