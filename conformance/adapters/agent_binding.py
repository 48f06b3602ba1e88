"""The chapter 09 Agent operation of the in-process binding: ``run_agent`` (Labs 9.2-9.5), played as a scenario.

A binding for it exposes ``Agent(options)``, the course's ``new Agent``: ``options`` a dict of the
course's names (``model``, ``tools``, ``toolExecutor``, ``systemPrompt``, ``maxSteps``); the
Agent has ``get_state()``, ``system_prompt``, ``subscribe(listener)`` (returning the function
that unsubscribes), ``steer(text)``, ``follow_up(text)``, ``abort()`` and ``prompt(text,
options)`` (an awaitable; ``options`` ``{"system": {...}}`` or None).

The model, the tools, the executor and the subscribers are the adapter's (:mod:`.agent_scripts`,
:mod:`.loop_scripts`); the registry is the implementation's own ``ToolRegistry``. The case's
steps drive the Agent on one asyncio loop; a step that waits for what can no longer happen ends
the scenario with ``stalled``, never a hang (spec/fixture-format.md, "The stateful agent").
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import Any

from conformance.adapters.agent_scripts import Aborts, AgentModel, Subscriber, outcome, scribble
from conformance.adapters.agent_state_binding import scribble_messages
from conformance.adapters.event_loop import run_coroutine, wait_settled, wait_until
from conformance.adapters.interface import HarnessError, ImplementationThrew, OperationNotSupported
from conformance.adapters.loop_binding import STEP_DEADLINE_S, LoopOperations, await_started, event_matches, parse_step
from conformance.adapters.loop_scripts import ScriptedExecutor, World
from conformance.adapters.tool_binding import error_message
from conformance.common.jsontypes import JsonObject, JsonValue


class _Play:
    """One Agent being driven: the Agent, its scripted parts, its prompts, and what was observed."""

    def __init__(self, ops: AgentOperations, input: JsonObject) -> None:
        self.ops = ops
        self.aborts = Aborts()
        self.world = World(ops.to_impl, ops.to_json, self.aborts, None)
        spec: Any = input
        self.model = AgentModel(list(spec["model"]["turns"]), self.world, self.aborts)
        self.deadline_s = max(ops.settle_deadline_s, STEP_DEADLINE_S)
        self.events: list[JsonValue] = []
        self.prompts: dict[str, asyncio.Future[Any]] = {}
        self.prompt_errors: dict[str, str] = {}
        self.outcomes: dict[str, JsonObject] = {}
        self.prompt_options: list[tuple[Any, str]] = []
        self.snapshots: dict[str, JsonValue] = {}
        self.actions: list[JsonObject] = []
        self.subscribers = {str(item["name"]): Subscriber(item, self.act) for item in spec.get("subscribers") or []}
        self.agent = self._construct(input)
        self.aborts.agent = self.agent
        self._subscribe_recorder()
        for subscriber in self.subscribers.values():
            if subscriber.at_start:
                self.subscribe(subscriber)

    def _construct(self, input: JsonObject) -> Any:
        settings: JsonObject = input.get("agent") or {}  # type: ignore[assignment]
        options: dict[str, Any] = {"model": self.model, "tools": self.ops.registry(input, self.world)}
        if "executor" in input:
            options["toolExecutor"] = ScriptedExecutor(input["executor"], self.world)  # type: ignore[arg-type]
        if "system_prompt" in settings:
            options["systemPrompt"] = settings["system_prompt"]
        if "max_steps" in settings:
            options["maxSteps"] = settings["max_steps"]
        agent, error = outcome(lambda: self.ops._api("Agent")(options))
        if error is not None:
            raise ImplementationThrew(f"new Agent() threw {error}")
        return agent

    def _subscribe_recorder(self) -> None:
        def record(event: Any) -> None:
            self.events.append(self.ops.to_json(event, "an event the Agent emitted"))

        self.call("subscribe", record)

    def call(self, method: str, *args: Any) -> Any:
        """``agent.method(*args)``; what it raises fails the case (ImplementationThrew)."""
        return self.ops._call_method(self.agent, "Agent", method, *args)

    def method(self, name: str) -> Any:
        """The Agent's method ``name``, to call where what it raises is observed (steer, prompt ...)."""
        found = getattr(self.agent, name, None)
        if not callable(found):
            raise OperationNotSupported(f"{self.ops.name}: Agent has no {name}")
        return found

    def subscribe(self, subscriber: Subscriber) -> None:
        subscriber.unsubscribe = self.call("subscribe", subscriber.listen(self.ops.to_json))

    def state(self) -> JsonObject:
        """``getState()`` and ``systemPrompt`` now."""
        return {
            "state": self.ops.to_json(self.call("get_state"), "the state get_state() returned"),
            "system_prompt": self.ops.to_json(getattr(self.agent, "system_prompt", None), "system_prompt"),
        }

    # -- what steps and subscribers do ------------------------------------------------------------

    def prompt(self, spec: JsonValue) -> str | None:
        """Call ``prompt(text, options)`` without awaiting it; the message of a synchronous throw, or None."""
        spec = spec if isinstance(spec, dict) else {"text": spec}
        name = str(spec.get("as", f"p{len(self.prompts) + len(self.prompt_errors) + 1}"))
        if name in self.prompts or name in self.prompt_errors:
            raise HarnessError(f"two prompts are called {name!r}")
        options = None if "system" not in spec else {"system": self.ops.to_impl(spec["system"])}
        if options is not None:
            self.prompt_options.append((options, self.ops._fingerprint(options)))
        prompt = self.method("prompt")
        called, error = outcome(lambda: prompt(str(spec.get("text", "")), options))
        if error is not None:
            self.prompt_errors[name] = error
            return error
        try:
            future = asyncio.ensure_future(called)
        except TypeError as refused:
            raise ImplementationThrew(f"prompt() returned {type(called).__name__}, not an awaitable") from refused
        self.prompts[name] = future
        # Serialized as it settles: a later mutate_result step changes the caller's copy, not what was observed.
        future.add_done_callback(lambda _: self._settle_quietly(name))
        return None

    def _settle_quietly(self, name: str) -> None:
        # A result that is no JSON value fails the case when the observation is made, not in a callback.
        with contextlib.suppress(ImplementationThrew):
            self.settled(name)

    def settled(self, name: str) -> JsonObject:
        """The prompt's outcome as JSON, taken once, when it first settled."""
        if name not in self.outcomes:
            future = self.prompts[name]
            if not future.done():
                return _PENDING
            self.outcomes[name] = _settled(self.ops, future)
        return self.outcomes[name]

    def act(self, subscriber: Subscriber, line: str, action: JsonValue, event: Any) -> None:
        """One action of a subscriber, on the event it got (``line``); a ``throw`` action raises."""
        name, argument = parse_step(action)
        if name == "throw":
            raise _SubscriberThrow(str(argument))
        entry: JsonObject = {"by": subscriber.name, "at": line, "action": name}
        if name == "snapshot":
            entry.update(self.state())
        elif name == "record":
            entry["event"] = self.ops.to_json(event, "an event a subscriber received")
        elif name == "mutate_event":
            scribble(event)
        elif name in ("unsubscribe", "subscribe"):
            self.toggle(name, str(argument))
        else:
            entry["error"] = self.control(name, argument)
        self.actions.append(entry)

    def control(self, name: str, argument: JsonValue) -> str | None:
        """``abort``, ``steer``, ``follow_up`` or ``prompt``: the message it threw, or None."""
        if name == "abort":
            return outcome(self.aborts.abort)[1]
        if name in ("steer", "follow_up"):
            method = self.method(name)
            return outcome(lambda: method(str(argument)))[1]
        if name == "prompt":
            return self.prompt(argument)
        raise HarnessError(f"unknown run_agent action {name!r}")

    def toggle(self, name: str, subscriber: str) -> None:
        target = self.subscribers.get(subscriber)
        if target is None:
            raise HarnessError(f"no subscriber {subscriber!r}")
        if name == "subscribe":
            self.subscribe(target)
        elif target.unsubscribe is not None:
            target.unsubscribe()

    # -- the steps --------------------------------------------------------------------------------

    async def step(self, name: str, argument: JsonValue) -> str | None:
        """Play one step; what it waited for in vain (``stalled``), or None."""
        handler = {
            "prompt": self._prompt_step,
            "await_prompt": self._await_prompt,
            "await_started": self._await_started,
            "await_request": self._await_request,
            "await_event": self._await_event,
            "release": lambda argument: self._open(str(argument)),
            "complete": lambda argument: self._open(f"turn:{argument}"),
            "settle": self._settle,
            "snapshot": self._snapshot,
            "mutate_state": lambda argument: self._mutate(self.call("get_state")),
            "mutate_result": self._mutate_result,
        }.get(name)
        if handler is not None:
            waited: str | None = await handler(argument)
            return waited
        if name in ("abort", "steer", "follow_up"):
            self.actions.append({"by": "steps", "at": None, "action": name, "error": self.control(name, argument)})
        elif name in ("subscribe", "unsubscribe"):
            self.toggle(name, str(argument))
        else:
            raise HarnessError(f"unknown run_agent step {name!r}")
        return None

    async def _prompt_step(self, argument: JsonValue) -> None:
        self.prompt(argument)
        await asyncio.sleep(0)  # a JavaScript async function runs to its first await when called

    async def _await_prompt(self, argument: JsonValue) -> str | None:
        future = self.prompts.get(str(argument))
        if future is None and str(argument) not in self.prompt_errors:
            raise HarnessError(f"no prompt {argument!r} before this step")
        if future is not None and not await wait_settled(future, self.deadline_s):
            return f"prompt {argument} to settle"
        return None

    async def _await_started(self, argument: JsonValue) -> str | None:
        return await await_started(self.world, argument, self.deadline_s)

    async def _await_request(self, argument: JsonValue) -> str | None:
        count = int(argument)  # type: ignore[arg-type]
        if await wait_until(lambda: len(self.model.requests) >= count, self.deadline_s):
            return None
        return f"model request {count} to start"

    async def _await_event(self, argument: JsonValue) -> str | None:
        wanted: JsonObject = argument if isinstance(argument, dict) else {}
        if await wait_until(lambda: any(_agent_event_matches(event, wanted) for event in self.events), self.deadline_s):
            return None
        return f"event {_describe(wanted)}"

    async def _open(self, gate: str) -> None:
        self.world.gate(gate).set()

    async def _settle(self, argument: JsonValue) -> None:
        await wait_until(lambda: False, self.deadline_s)  # returns once the loop is idle

    async def _snapshot(self, argument: JsonValue) -> None:
        self.snapshots[str(argument)] = self.state()

    async def _mutate(self, value: Any) -> None:
        scribble_messages(value)

    async def _mutate_result(self, argument: JsonValue) -> None:
        future = self.prompts.get(str(argument))
        if future is None or not future.done() or future.exception() is not None:
            raise HarnessError(f"mutate_result needs prompt {argument!r} fulfilled")
        self.settled(str(argument))
        scribble_messages(future.result())


class _SubscriberThrow(Exception):
    """What a subscriber's ``throw`` action raises, for the Agent to catch (AGENT-SUB-3)."""


class AgentOperations(LoopOperations):
    """Chapter 09's ``run_agent``; :class:`~conformance.adapters.binding.BindingAdapter` supplies the helpers."""

    def run_agent(self, input: JsonObject) -> JsonObject:
        """Drive one ``Agent`` through the case's steps; its events, requests, prompts, states and actions."""
        observation: JsonObject = run_coroutine(self._play_agent(input))
        return observation

    async def _play_agent(self, input: JsonObject) -> JsonObject:
        play = _Play(self, input)
        stalled: JsonValue = None
        steps: list[Any] = list(input.get("steps") or [])  # type: ignore[arg-type]
        for index, step in enumerate(steps):
            waiting_for = await play.step(*parse_step(step))
            if waiting_for is not None:
                stalled = {"step": index, "waiting_for": waiting_for}
                break
        if stalled is None:  # every prompt is awaited at the end, in the order they were made
            for name, future in list(play.prompts.items()):
                if not await wait_settled(future, play.deadline_s):
                    stalled = {"step": len(steps), "waiting_for": f"prompt {name} to settle"}
                    break
        play.model.change_earlier_answers()  # before the state and results are read (AGENT-LOOP-4)
        return self._agent_observation(play, stalled)

    def _agent_observation(self, play: _Play, stalled: JsonValue) -> JsonObject:
        prompts: JsonObject = {name: _rejected(error) for name, error in play.prompt_errors.items()}
        for name in play.prompts:
            prompts[name] = play.settled(name)
        final = play.state()
        return {
            "events": list(play.events),
            "requests": copy.deepcopy(play.model.requests),
            "signals": list(play.model.signals),
            "prompts": prompts,
            "state": final["state"],
            "system_prompt": final["system_prompt"],
            "snapshots": play.snapshots,
            "deliveries": {name: list(subscriber.lines) for name, subscriber in play.subscribers.items()},
            "actions": list(play.actions),
            "received": list(play.world.received),
            "prompt_options_unchanged": all(self._fingerprint(options) == before for options, before in play.prompt_options),
            "stalled": stalled,
        }


def _rejected(message: str) -> JsonObject:
    return {"status": "rejected", "result": None, "error": {"message": message}}


_PENDING: JsonObject = {"status": "pending", "result": None, "error": None}


def _settled(ops: AgentOperations, future: asyncio.Future[Any]) -> JsonObject:
    error = future.exception()
    if error is not None:
        return _rejected(error_message(error))
    return {"status": "fulfilled", "result": ops.to_json(future.result(), "the result prompt() resolved with"), "error": None}


def _agent_event_matches(event: JsonValue, wanted: JsonObject) -> bool:
    """An Agent event of ``wanted.type`` (and ``runId``); for ``loop``, its inner event as ``event_matches`` sees it."""
    if not isinstance(event, dict) or event.get("type") != wanted.get("type"):
        return False
    if "runId" in wanted and event.get("runId") != wanted["runId"]:
        return False
    if "loop" not in wanted:
        return True
    inner = {"type": wanted["loop"], **({"callId": wanted["callId"]} if "callId" in wanted else {})}
    return event_matches(event.get("event"), inner)


def _describe(wanted: JsonObject) -> str:
    parts = [str(wanted.get("type"))]
    if "runId" in wanted:
        parts.append(f"of run {wanted['runId']}")
    if "loop" in wanted:
        parts.append(str(wanted["loop"]))
    if "callId" in wanted:
        parts.append(f"of call {wanted['callId']}")
    return " ".join(parts)
