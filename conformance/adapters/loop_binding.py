"""The chapter 07 operation of the in-process binding: ``run_agent_loop``, played as a scenario.

A binding for chapter 07 exposes, besides chapter 06's names (:mod:`.tool_binding`),
``run_agent_loop(options)``, the course's ``runAgentLoop``: an awaitable that takes a dict of
the course's option names (``model``, ``tools``, ``context``, ``signal``, ``onEvent``,
``executeToolCall``, ``maxSteps``) and resolves with ``{reason, messages, steps}``.

The model, the tools and the executor are the adapter's (:mod:`.loop_scripts`); the
registry and the tools' schemas are the implementation's own chapter 06 ``ToolRegistry``
and ``object_schema``, as in the course. The case's ``steps`` drive the run on one asyncio
loop; a step that waits for something that can no longer happen (the loop is idle) ends
the scenario with ``stalled``, never a hang (spec/fixture-format.md, "Scenarios").
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

from conformance.adapters.event_loop import run_coroutine, wait_settled, wait_until
from conformance.adapters.interface import HarnessError, ImplementationThrew
from conformance.adapters.loop_scripts import LoopModel, LoopTool, ScriptedExecutor, World
from conformance.adapters.tool_binding import ToolContractOperations, error_message
from conformance.common.jsontypes import JsonObject, JsonValue

DEFAULT_STEPS: tuple[JsonValue, ...] = ("start", "await_run")

#: How long a waiting step waits at most. Idle settling ends a wait that can never be satisfied
#: in microseconds, so this only bounds a run that stays busy; it is longer than the default case
#: timeout on purpose: a satisfiable wait on a loaded machine must not be reported as stalled, and
#: a run that never idles is the case's timeout, not a stall.
STEP_DEADLINE_S = 2.0


def parse_step(step: JsonValue) -> tuple[str, JsonValue]:
    """A step as ``(name, argument)``: ``start`` or ``{release: G}``."""
    if isinstance(step, str):
        return step, None
    if isinstance(step, dict) and len(step) == 1:
        ((name, argument),) = step.items()
        return name, argument
    raise HarnessError(f"a step is a name or a mapping of one name: {step!r}")


def event_matches(event: JsonValue, wanted: JsonObject) -> bool:
    """Whether an emitted event (as JSON) is of ``wanted.type`` and, when given, about ``wanted.callId``."""
    if not isinstance(event, dict) or event.get("type") != wanted.get("type"):
        return False
    if "callId" not in wanted:
        return True
    return wanted["callId"] in (event.get("callId"), _nested(event, "call", "id"), _nested(event, "result", "toolCallId"))


def _nested(event: JsonObject, outer: str, inner: str) -> JsonValue:
    value = event.get(outer)
    return value.get(inner) if isinstance(value, dict) else None


async def await_started(world: World, argument: JsonValue, deadline_s: float) -> str | None:
    """The ``await_started`` step: None once each named tool started as often as listed, else what never started."""
    names = [str(item) for item in argument] if isinstance(argument, list) else [str(argument)]
    if await wait_until(lambda: world.has_started(names), deadline_s):
        return None
    missing = [item for item in names if not world.has_started([item])] or names
    return f"tool {', '.join(missing)} to start"


class _Scenario:
    """One run being driven: its options, its pending result, and what was seen so far."""

    def __init__(self, world: World, options: dict[str, Any], model: LoopModel, deadline_s: float) -> None:
        self.world = world
        self.options = options
        self.model = model
        self.deadline_s = deadline_s
        self.run: asyncio.Future[Any] | None = None
        self.start_error: str | None = None

    def started(self) -> asyncio.Future[Any]:
        if self.run is None:
            raise HarnessError("the case awaits the run before a start step")
        return self.run

    def events_json(self) -> list[JsonValue]:
        return [self.world.to_json(event, "an event the loop emitted") for event in list(self.world.events)]

    async def step(self, name: str, argument: JsonValue, entry: Callable[..., Any]) -> str | None:
        """Play one step; what it waited for in vain (``stalled``), or None."""
        if name == "start":
            return await self._start(entry)
        handler = {
            "await_started": self._await_started,
            "release": self._release,
            "await_event": self._await_event,
            "settle": self._settle,
            "abort": self._abort,
            "await_run": self._await_run,
        }.get(name)
        if handler is None:
            raise HarnessError(f"unknown run_agent_loop step {name!r}")
        return await handler(argument)

    async def _start(self, entry: Callable[..., Any]) -> str | None:
        if self.run is not None or self.start_error is not None:
            raise HarnessError("a case starts its run once")
        try:
            self.run = asyncio.ensure_future(entry(self.options))
        except Exception as error:  # a synchronous throw is the run's rejection
            self.start_error = error_message(error)
            return None
        # A JavaScript async function runs to its first await when called: let the coroutine do the same.
        await asyncio.sleep(0)
        return None

    async def _await_started(self, argument: JsonValue) -> str | None:
        return await await_started(self.world, argument, self.deadline_s)

    async def _release(self, argument: JsonValue) -> str | None:
        self.world.gate(str(argument)).set()
        return None

    async def _await_event(self, argument: JsonValue) -> str | None:
        wanted = argument if isinstance(argument, dict) else {}
        if await wait_until(lambda: any(event_matches(event, wanted) for event in self.events_json()), self.deadline_s):
            return None
        about = f" of call {wanted['callId']}" if "callId" in wanted else ""
        return f"event {wanted.get('type')}{about}"

    async def _settle(self, argument: JsonValue) -> str | None:
        await wait_until(lambda: False, self.deadline_s)  # returns once the loop is idle
        return None

    async def _abort(self, argument: JsonValue) -> str | None:
        self.world.controller.abort()
        return None

    async def _await_run(self, argument: JsonValue) -> str | None:
        if self.start_error is None and not await wait_settled(self.started(), self.deadline_s):
            return "the run to settle"
        return None


class LoopOperations(ToolContractOperations):
    """Chapter 07's ``run_agent_loop``; :class:`~conformance.adapters.binding.BindingAdapter` supplies the helpers."""

    def run_agent_loop(self, input: JsonObject) -> JsonObject:
        """Drive one ``runAgentLoop`` through the case's steps; the events, requests, result and what the tools got."""
        observation: JsonObject = run_coroutine(self._drive(input))
        return observation

    def _world(self, signal_mode: str) -> World:
        controller = self._api("AbortController")()
        if signal_mode == "pre_aborted":
            controller.abort()
        return World(self.to_impl, self.to_json, controller, None if signal_mode == "none" else controller.signal)

    def registry(self, input: JsonObject, world: World) -> Any:
        """The implementation's ``ToolRegistry`` holding the case's scripted tools."""
        registry, error = self._attempt(self._api("ToolRegistry"), "ToolRegistry")
        if error is not None:
            raise ImplementationThrew(f"new ToolRegistry() threw {error}")
        specs: list[Any] = list(input.get("tools") or [])  # type: ignore[arg-type]
        for spec in specs:
            tool = LoopTool(spec, self._schema(spec["schema"]), world)
            if self._attempt(self._method(registry, "ToolRegistry", "register"), "register", tool)[1] is not None:
                raise ImplementationThrew(f"register({tool.name}) threw")
        return registry

    def _options(self, input: JsonObject, world: World, model: LoopModel) -> dict[str, Any]:
        registry = self.registry(input, world)
        settings: JsonObject = input.get("options") or {}  # type: ignore[assignment]
        options: dict[str, Any] = {"model": model, "tools": registry, "context": self.to_impl(input["context"])}
        if world.signal is not None:
            options["signal"] = world.signal
        if settings.get("on_event", True):
            options["onEvent"] = world.events.append
        if "executor" in input:
            options["executeToolCall"] = ScriptedExecutor(input["executor"], world)  # type: ignore[arg-type]
        if "max_steps" in settings:
            options["maxSteps"] = settings["max_steps"]
        return options

    async def _drive(self, input: JsonObject) -> JsonObject:
        settings: JsonObject = input.get("options") or {}  # type: ignore[assignment]
        world = self._world(str(settings.get("signal", "none")))
        model_spec: Any = input["model"]
        model = LoopModel(list(model_spec["turns"]), world)
        options = self._options(input, world, model)
        caller_messages = options["context"].get("messages") if isinstance(options["context"], dict) else None
        before = self._fingerprint(options["context"])
        scenario = _Scenario(world, options, model, max(self.settle_deadline_s, STEP_DEADLINE_S))
        steps = list(input.get("steps") or DEFAULT_STEPS)  # type: ignore[arg-type]
        if steps[-1] != "await_run":
            steps.append("await_run")  # the run is always awaited last (spec/fixture-format.md)
        stalled: JsonValue = None
        entry = self._api("run_agent_loop")
        for index, step in enumerate(steps):
            name, argument = parse_step(step)
            waiting_for = await scenario.step(name, argument, entry)
            if waiting_for is not None:
                stalled = {"step": index, "waiting_for": waiting_for}
                break
        return self._observation(scenario, stalled, caller_messages, before)

    def _observation(self, scenario: _Scenario, stalled: JsonValue, caller_messages: Any, before: str) -> JsonObject:
        run = scenario.run
        result: JsonValue = None
        error: JsonValue = None if scenario.start_error is None else {"message": scenario.start_error}
        fresh: JsonValue = None
        if stalled is None and run is not None and run.done():
            if run.exception() is not None:
                error = {"message": error_message(run.exception())}  # type: ignore[arg-type]
            else:
                value = run.result()
                result = self.to_json(value, "the result runAgentLoop() resolved with")
                messages = value.get("messages") if isinstance(value, dict) else getattr(value, "messages", None)
                fresh = messages is not caller_messages
        return {
            "events": scenario.events_json(),
            "requests": copy.deepcopy(scenario.model.requests),
            "result": result,
            "error": error,
            "fresh_messages": fresh,
            "context_unchanged": self._fingerprint(scenario.options["context"]) == before,
            "received": list(scenario.world.received),
            "stalled": stalled,
        }
