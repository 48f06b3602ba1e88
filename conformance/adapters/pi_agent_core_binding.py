"""Python binding for ports of upstream pi-agent-core 1.x's agent loop (profile ``pi-agent-core-1``), in process.

A port exposes the loop's entry points under Python names; the adapter builds everything a case
scripts (:mod:`.pi_agent_core_scripts`) and drives the steps, as ``node/pi_agent_core_adapter.mjs`` does
for upstream itself:

======================================================================= =====================================================
binding name                                                            upstream (1.6.0)
======================================================================= =====================================================
``run_agent_loop(prompts, context, config, emit, signal, stream_fn)``   ``runAgentLoop(...)``: awaitable of the new messages
``agent_loop(prompts, context, config, signal, stream_fn)``             ``agentLoop(...)``: a stream (``async for``, ``result()``)
``run_agent_loop_continue(context, config, emit, signal, stream_fn)``   ``runAgentLoopContinue(...)``
``agent_loop_continue(context, config, signal, stream_fn)``             ``agentLoopContinue(...)``
``AssistantMessageEventStream()``                                       pi-ai's ``createAssistantMessageEventStream()``
``AbortController()``                                                   ``new AbortController()``: ``abort()``, ``signal.aborted``
``AgentTool(name=, label=, description=, parameters=, execute=, ...)``  optional: the port's own tool type (else the adapter's object)
======================================================================= =====================================================

Values are plain dicts with upstream's camelCase keys, or the port's own objects through the
binding's ``to_impl`` / ``to_json`` hooks (docs/porting.md, section 3); the config is a dict
with snake_case keys. The whole contract, with each argument and return: docs/porting.md,
"The pi-agent-core-1 binding". Plug a port in with a module of its own::

    from conformance.adapters.pi_agent_core_binding import PiAgentCoreBindingAdapter
    import my_port
    ADAPTER = PiAgentCoreBindingAdapter(my_port, name="my-port")

and run ``pi-conformance run --profile pi-agent-core-1 --impl python:my_port.conformance:ADAPTER``.
Every case is counted whatever the port does: a name it lacks or a ``NotImplementedError``
skips the case, an exception of the entry point is the run's ``error`` (the spec observes it),
and any other ``BaseException`` errors the case with its name.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.adapters.binding import BindingAdapter
from conformance.adapters.event_loop import run_coroutine, wait_until
from conformance.adapters.interface import HarnessError, ImplementationThrew, OperationNotSupported
from conformance.adapters.loop_binding import STEP_DEADLINE_S
from conformance.adapters.pi_agent_core_agent_binding import AgentOperation
from conformance.adapters.pi_agent_core_scripts import (
    DEFAULT_MODEL,
    AgentWorld,
    ScriptedTool,
    convert_to_llm,
    scripted_hook,
    scripted_queue,
    stream_fn,
    trace_line,
)
from conformance.adapters.pi_agent_core_turns import TURN_FUNCTIONS, scripted_turn_function
from conformance.adapters.pi_ai_binding import field_of
from conformance.common.jsontypes import JsonObject, JsonValue

#: Entry name in a case -> (binding name, whether it takes prompts, whether it returns a stream rather than an awaitable).
ENTRIES: dict[str, tuple[str, bool, bool]] = {
    "runAgentLoop": ("run_agent_loop", True, False),
    "agentLoop": ("agent_loop", True, True),
    "runAgentLoopContinue": ("run_agent_loop_continue", False, False),
    "agentLoopContinue": ("agent_loop_continue", False, True),
}
DEFAULT_STEPS: tuple[JsonValue, ...] = ("start", "await_run")
_SIGNALS = ("given", "none", "pre_aborted")


@dataclass
class _Run:
    """The run a ``start`` step began: its task, and how it ended."""

    task: asyncio.Future[Any] | None = None
    settled: bool = False
    result: JsonValue = None
    error: JsonValue = None
    #: Why the new messages could not be serialized (the case then fails with it).
    bad_result: str | None = None


def _step(step: JsonValue) -> tuple[str, JsonValue]:
    if isinstance(step, str):
        return step, None
    if isinstance(step, dict) and len(step) == 1:
        ((name, argument),) = step.items()
        return str(name), argument
    raise HarnessError(f"a step is a name or a mapping of one name: {step!r}")


class PiAgentCoreBindingAdapter(AgentOperation, BindingAdapter):
    """A :class:`BindingAdapter` of profile ``pi-agent-core-1``: ``agent_loop`` on the port's entry points, ``agent`` on its Agent."""

    def __init__(self, binding: Any, name: str = "python-pi-agent-core", version: str = "") -> None:
        super().__init__(binding, name=name, version=version)
        self.profile = "pi-agent-core-1"

    def agent_loop(self, input: JsonObject) -> JsonObject:
        """One whole agent scenario: its events, requests, result or error, and what the scripted parts saw."""
        observation: JsonObject = run_coroutine(self._agent_play(input))
        return observation

    # -- building the case ---------------------------------------------------------------------

    def _agent_world(self, config: JsonObject) -> AgentWorld:
        mode = config.get("signal", "given")
        if mode not in _SIGNALS:
            raise HarnessError(f"unknown signal option {mode!r}")
        controller = None if mode == "none" else self._call("AbortController")
        if controller is not None and mode == "pre_aborted":
            controller.abort()
        signal = None if controller is None else controller.signal
        return AgentWorld(self.to_impl, self.to_json, controller, signal)

    def _agent_tool(self, spec: JsonObject, world: AgentWorld) -> Any:
        """The adapter's scripted tool, or the port's own ``AgentTool`` made from it when the binding has one."""
        tool = ScriptedTool(spec, world)
        factory = getattr(self.binding, "AgentTool", None)
        if not callable(factory):
            return tool
        fields: dict[str, Any] = {
            "name": tool.name,
            "label": tool.label,
            "description": tool.description,
            "parameters": tool.parameters,
            "execute": tool.execute,
        }
        if tool.execution_mode is not None:
            fields["execution_mode"] = tool.execution_mode
        return self._call_function(lambda: factory(**fields), "AgentTool")  # fields hold a "name": pass them in a closure

    def _agent_config(self, options: JsonObject, world: AgentWorld, tools: list[Any]) -> dict[str, Any]:
        """The loop config: snake_case keys; the model, ``convert_to_llm``, and what the case scripts."""
        config: dict[str, Any] = {"model": dict(options.get("model") or DEFAULT_MODEL), "convert_to_llm": convert_to_llm}  # type: ignore[arg-type]
        if "tool_execution" in options:
            config["tool_execution"] = str(options["tool_execution"])
        for key, name in (("before_tool_call", "before"), ("after_tool_call", "after")):
            if key in options:
                config[key] = scripted_hook(name, options[key], world)
        for key, name in (("steering", "get_steering_messages"), ("follow_up", "get_follow_up_messages")):
            if key in options:
                config[name] = scripted_queue(key, options[key], world)
        for key in TURN_FUNCTIONS:
            if key in options:
                config[key] = scripted_turn_function(key, options[key], world, tools)
        return config

    def _agent_stream_factory(self) -> Callable[[], Any]:
        for name in ("AssistantMessageEventStream", "create_assistant_message_event_stream"):
            if callable(getattr(self.binding, name, None)):
                return lambda: self._call(name)
        raise OperationNotSupported(f"{self.name} has no AssistantMessageEventStream")

    # -- playing it ----------------------------------------------------------------------------

    async def _agent_play(self, input: JsonObject) -> JsonObject:
        entry = str(input.get("entry", "runAgentLoop"))
        if entry not in ENTRIES:
            raise HarnessError(f"unknown entry {entry!r}")
        binding_name, takes_prompts, streams = ENTRIES[entry]
        function = self._api(binding_name)
        options: Any = input.get("config") or {}
        world = self._agent_world(options)
        specs: Any = input.get("tools") or []
        tools = [self._agent_tool(spec, world) for spec in specs]
        raw: Any = input.get("context") or {}
        context: dict[str, Any] = {"messages": self.to_impl(list(raw.get("messages") or []))}
        if tools:
            context["tools"] = tools
        caller_messages = context["messages"]
        before = self._fingerprint(caller_messages)
        model: Any = input.get("model") or {}
        streamer = stream_fn(list(model.get("turns") or []), world, self._agent_stream_factory())
        config = self._agent_config(options, world, tools)
        head: list[Any] = [self.to_impl(list(input.get("prompts") or []))] if takes_prompts else []  # type: ignore[arg-type]

        def start() -> Any:
            if streams:
                return function(*head, context, config, world.signal, streamer)
            return function(*head, context, config, world.emit, world.signal, streamer)

        run = _Run()
        steps: Any = input.get("steps") or DEFAULT_STEPS
        stalled = await self._agent_steps(list(steps), world, run, lambda: self._agent_start(start, streams, world, run))
        self._agent_check(run, world)
        observation: dict[str, Any] = {
            "events": world.events,
            "trace": [trace_line(event) for event in world.events],
            "requests": world.requests,
            "models": world.models,
            "result": run.result,
            "error": run.error,
            "context_unchanged": self._fingerprint(caller_messages) == before,
            "received": world.received,
            "hooks": world.hooks,
            "turn_functions": world.turn_functions,
            "polls": dict(world.polls),
            "stalled": stalled,
        }
        return observation

    @staticmethod
    def _agent_check(run: _Run, world: AgentWorld) -> None:
        """What makes the run no observation: a NotImplementedError (skipped), the port's BaseException, a value that is not JSON."""
        task = run.task
        if task is not None and task.cancelled():
            raise HarnessError("the port cancelled its own run (asyncio.CancelledError)")
        error = task.exception() if task is not None and task.done() else None
        if isinstance(error, NotImplementedError):
            raise OperationNotSupported(f"the entry point is not implemented: {error}") from error
        if error is not None and not isinstance(error, Exception):
            raise error  # GeneratorExit and the like: the case errors with its name (SystemExit reaches the runner itself)
        for failure in (world.bad_event, run.bad_result):
            if failure is not None:
                raise ImplementationThrew(failure)

    async def _agent_start(self, start: Callable[[], Any], streams: bool, world: AgentWorld, run: _Run) -> None:
        """Call the entry point; its settling is kept in ``run`` (a raise before it returns is the run's error)."""
        if run.task is not None or run.settled:
            raise HarnessError("a case starts its run once")
        try:
            returned = start()
        except NotImplementedError as error:
            raise OperationNotSupported(f"the entry point is not implemented: {error}") from error
        except Exception as error:  # agentLoopContinue throws before returning on a context it cannot continue
            self._agent_settle(run, error=error)
            return
        work = self._agent_consume(returned, world) if streams else returned
        try:
            task = asyncio.ensure_future(work)
        except TypeError as error:
            raise ImplementationThrew(f"the entry point returned {type(returned).__name__}, not an awaitable: {error}") from error
        run.task = task
        task.add_done_callback(lambda done: self._agent_finished(run, done))
        await asyncio.sleep(0)  # as a JavaScript async function runs to its first await when called

    async def _agent_consume(self, stream: Any, world: AgentWorld) -> Any:
        async for event in stream:
            world.record(event)
        return await stream.result()

    def _agent_finished(self, run: _Run, task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            self._agent_settle(run, error=asyncio.CancelledError("the run's task was cancelled"))
            return
        error = task.exception()
        if error is None:
            try:
                run.result = self.to_json(task.result(), "what the entry point returned")
            except ImplementationThrew as failure:
                run.bad_result = str(failure)  # the case fails with it
            run.settled = True
        else:
            self._agent_settle(run, error=error)

    @staticmethod
    def _agent_settle(run: _Run, error: BaseException) -> None:
        run.settled = True
        run.error = {"message": str(error)}

    async def _agent_steps(self, steps: list[JsonValue], world: AgentWorld, run: _Run, start: Callable[[], Any]) -> JsonValue:
        """Play the steps in order; a waiting step still unmet once the loop is idle stops the play as ``stalled``."""
        deadline = max(self.settle_deadline_s, STEP_DEADLINE_S)
        for index, step in enumerate(steps):
            name, value = _step(step)
            if name in ("await_started", "await_event", "await_run"):
                condition, what = _waiting(name, value, world, run)
                if not await wait_until(condition, deadline):
                    return {"step": index, "waiting_for": what}
            else:
                await self._agent_act(name, value, world, start, deadline)
        return None

    @staticmethod
    async def _agent_act(name: str, value: JsonValue, world: AgentWorld, start: Callable[[], Any], deadline: float) -> None:
        """A step that waits for nothing: ``start``, ``release``, ``complete``, ``abort`` or ``settle``."""
        if name == "start":
            await start()
        elif name == "release":
            world.gate(f"tool:{value}").set()
        elif name == "complete":
            world.gate(f"turn:{value}").set()
        elif name == "abort":
            world.abort()
        elif name == "settle":
            await wait_until(lambda: False, deadline)  # returns once the loop is idle
        else:
            raise HarnessError(f"unknown step {name!r}")


def _waiting(name: str, value: JsonValue, world: AgentWorld, run: _Run) -> tuple[Callable[[], bool], str]:
    """A waiting step's condition, and what it waits for in the words of ``stalled``."""
    if name == "await_started":
        names = [str(item) for item in value] if isinstance(value, list) else [str(value)]
        return (lambda: all(item in world.started for item in names)), f"tools {', '.join(names)} to start"
    if name == "await_event":
        if not isinstance(value, dict):
            raise HarnessError("await_event needs a mapping of event fields")
        wanted = value

        def fits() -> bool:
            return any(isinstance(event, dict) and all(event.get(k) == v for k, v in wanted.items()) for event in world.events)

        return fits, f"an event {json.dumps(wanted, ensure_ascii=False, separators=(',', ':'))}"
    return (lambda: run.settled), "the run to settle"


__all__ = ["ENTRIES", "PiAgentCoreBindingAdapter", "field_of", "trace_line"]
