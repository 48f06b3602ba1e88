"""pi-py-agent-core 0.85.1 (``import pi_agent_core``, on pi-py-ai's ``pi_ai``) bound to profile pi-agent-core-1.

Messages, blocks and model events are pydantic models with camelCase aliases; agent events and
tool results are dataclasses with snake_case fields. The port has only the stream entry points:
``run_agent_loop`` and ``run_agent_loop_continue`` are built on them (each event handed to
``emit``, then the stream's result). Its cancellation is an ``asyncio.Event``; it has no
system-role message type (``to_impl`` refuses one, which skips the case). Run it from a venv
holding the port (README.md):

    --impl "cmd:VENV/bin/python -m conformance.server --impl python:pypi_ports.pi_py_agent_core:adapter"
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
from dataclasses import dataclass
from typing import Any

from .names import adapter_for, camel, classify, each

core: Any = importlib.import_module("pi_agent_core")
pi_ai: Any = importlib.import_module("pi_ai")
ai_types: Any = importlib.import_module("pi_ai.types")
ai_events: Any = importlib.import_module("pi_ai.events")
BaseModel: Any = importlib.import_module("pydantic").BaseModel

_ROLES = {"user": ai_types.UserMessage, "assistant": ai_types.AssistantMessage, "toolResult": ai_types.ToolResultMessage}
_BLOCKS = {"text": ai_types.TextContent, "thinking": ai_types.ThinkingContent, "toolCall": ai_types.ToolCall}
_MODELS: list[Any] = [cls for cls in vars(ai_events).values() if isinstance(cls, type) and issubclass(cls, BaseModel)]
_EVENTS: dict[Any, Any] = {model.model_fields["type"].default: model for model in _MODELS if "type" in model.model_fields}
AssistantMessageEventStream = pi_ai.EventStream  # no terminal test: its result is end()'s argument


class _Signal(asyncio.Event):
    """The port's cancellation, an ``asyncio.Event``, that the scripted model reads as ``aborted``."""

    @property
    def aborted(self) -> bool:
        return self.is_set()


class AbortController:
    def __init__(self) -> None:
        self.signal = _Signal()

    def abort(self) -> None:
        self.signal.set()


def _validate(cls: Any, value: dict[str, Any]) -> Any:
    known = set(cls.model_fields) | {field.alias for field in cls.model_fields.values() if field.alias}
    return cls.model_validate({key: item for key, item in value.items() if key in known})  # extra="forbid": 1.x-only keys dropped


def to_impl(value: Any) -> Any:
    """A JSON value as the port's object: messages by role, model events and blocks by type; anything else unchanged."""
    if not isinstance(value, dict):
        return each(value, to_impl)
    kind, name = classify(value, "pi-py-ai", _ROLES)
    if kind == "message":
        return _validate(_ROLES[name], value)
    if kind == "event":
        return _validate(
            _EVENTS[name], {key: to_impl(item) if key in ("partial", "message", "error") else item for key, item in value.items()}
        )
    return _validate(_BLOCKS[name], value) if kind == "block" and name in _BLOCKS else each(value, to_impl)


def to_json(value: Any) -> Any:
    """The port's object as upstream's JSON: aliases for models, camelCase for dataclasses, unset fields absent."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        return each(value, to_json)
    unset_terminate = isinstance(value, core.AgentToolResult)  # its type defaults terminate to False: unset
    fields = ((field.name, getattr(value, field.name)) for field in dataclasses.fields(value))
    return {
        camel(name): to_json(item)
        for name, item in fields
        if item is not None and not (unset_terminate and name == "terminate" and item is False)
    }


def _result(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return core.AgentToolResult(content=value.get("content") or [], details=value.get("details"), terminate=bool(value.get("terminate")))


@dataclass
class _Tool:
    """The port's tool contract (a protocol): these attributes and ``execute``."""

    name: str
    label: str
    description: str
    parameters: Any
    execution_mode: Any
    run: Any

    async def execute(self, tool_call_id: Any, params: Any, cancel_event: Any = None, on_update: Any = None) -> Any:
        update = None if on_update is None else (lambda partial: on_update(_result(partial)))
        return _result(await self.run(tool_call_id, params, cancel_event, update))


def AgentTool(*, name: str, label: str, description: str, parameters: Any, execute: Any, execution_mode: Any = None) -> Any:
    return _Tool(name, label, description, parameters, execution_mode, execute)


def _hook(hook: Any, after: bool) -> Any:
    async def call(context: Any, cancel_event: Any = None) -> Any:
        answer = await hook(context, cancel_event)
        if answer is None or not after:
            return answer  # the port reads before's answer as a dict: block, reason, terminate
        return {("is_error" if key == "isError" else key): item for key, item in answer.items()}

    return call


def _config(config: dict[str, Any]) -> Any:
    options: dict[str, Any] = {"model": ai_types.Model.model_validate(config["model"]), "convert_to_llm": config["convert_to_llm"]}
    options.update({key: config[key] for key in ("tool_execution", "get_steering_messages", "get_follow_up_messages") if key in config})
    options.update({key: _hook(config[key], key == "after_tool_call") for key in ("before_tool_call", "after_tool_call") if key in config})
    return core.AgentLoopConfig(**options)


def _context(context: dict[str, Any]) -> Any:
    return core.AgentContext(system_prompt="", messages=context["messages"], tools=context.get("tools"))


def agent_loop(prompts: Any, context: Any, config: Any, signal: Any, stream_fn: Any) -> Any:
    return core.agent_loop(prompts, _context(context), _config(config), signal, stream_fn)


def agent_loop_continue(context: Any, config: Any, signal: Any, stream_fn: Any) -> Any:
    return core.agent_loop_continue(_context(context), _config(config), signal, stream_fn)


async def _drain(stream: Any, emit: Any) -> Any:
    async for event in stream:
        returned = emit(event)
        if inspect.isawaitable(returned):
            await returned
    return await stream.result()


async def run_agent_loop(prompts: Any, context: Any, config: Any, emit: Any, signal: Any, stream_fn: Any) -> Any:
    return await _drain(agent_loop(prompts, context, config, signal, stream_fn), emit)


async def run_agent_loop_continue(context: Any, config: Any, emit: Any, signal: Any, stream_fn: Any) -> Any:
    return await _drain(agent_loop_continue(context, config, signal, stream_fn), emit)


class _Agent:
    """The port's ``Agent`` under the binding's names: its cancellation event as ``signal``, its queues' modes as properties."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)

    @property
    def signal(self) -> Any:
        return self._agent.cancel_event

    @property
    def steering_mode(self) -> Any:
        return self._agent.steering_queue.mode

    @steering_mode.setter
    def steering_mode(self, mode: Any) -> None:
        self._agent.steering_queue.mode = mode

    @property
    def follow_up_mode(self) -> Any:
        return self._agent.follow_up_queue.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: Any) -> None:
        self._agent.follow_up_queue.mode = mode


def Agent(options: dict[str, Any]) -> Any:
    """``Agent(AgentOptions(...))``: ``initial_state`` as the dict the port takes, its model validated."""
    initial = {**options["initial_state"], "model": ai_types.Model.model_validate(options["initial_state"]["model"])}
    kept: dict[str, Any] = {key: options[key] for key in ("steering_mode", "follow_up_mode", "tool_execution") if key in options}
    kept.update({key: _hook(options[key], key == "after_tool_call") for key in ("before_tool_call", "after_tool_call") if key in options})
    return _Agent(core.Agent(core.AgentOptions(initial, stream_fn=options["stream_fn"], **kept)))


def adapter() -> Any:
    """``--impl python:pypi_ports.pi_py_agent_core:adapter``."""
    return adapter_for(__name__, "pi-py-agent-core")
