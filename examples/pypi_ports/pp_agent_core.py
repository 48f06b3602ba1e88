"""pp-agent-core 0.2.1 (``import pi_agent``, on pp-ai's ``pi_ai``) bound to profile pi-agent-core-1.

Its values are dataclasses with snake_case fields: ``to_impl`` builds them from upstream's JSON
(dropping keys the types lack, such as ``thinkingLevel``), ``to_json`` gives upstream's JSON form
back (unset fields absent). It has no system-role message type: ``to_impl`` refuses one, which
skips the case. Run it from a venv holding the port (README.md):

    --impl "cmd:VENV/bin/python -m conformance.server --impl python:pypi_ports.pp_agent_core:adapter"
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from .names import adapter_for, camel, classify, each, snake

pi_agent: Any = importlib.import_module("pi_agent")
ai_types: Any = importlib.import_module("pi_ai.types")
AbortController: Any = importlib.import_module("pi_ai.utils.abort").AbortController
AssistantMessageEventStream: Any = importlib.import_module("pi_ai").AssistantMessageEventStream

_ROLES = {"user": ai_types.UserMessage, "assistant": ai_types.AssistantMessage, "toolResult": ai_types.ToolResultMessage}
_BLOCKS = {"text": ai_types.TextContent, "thinking": ai_types.ThinkingContent, "toolCall": ai_types.ToolCall}
_EVENTS: dict[Any, Any] = {  # the model's events by type: StartEvent, TextDeltaEvent, DoneEvent...
    field.default: cls
    for name, cls in vars(ai_types).items()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and name.endswith("Event")
    for field in dataclasses.fields(cls)
    if field.name == "type" and isinstance(field.default, str)
}
_NESTED = {"usage": ai_types.Usage, "cost": ai_types.Cost}


def _build(cls: Any, value: dict[str, Any]) -> Any:
    names = {field.name for field in dataclasses.fields(cls)}
    fields = {snake(key): item for key, item in value.items() if snake(key) in names}
    return cls(
        **{
            name: _build(_NESTED[name], item) if name in _NESTED and isinstance(item, dict) else to_impl(item)
            for name, item in fields.items()
        }
    )


def to_impl(value: Any) -> Any:
    """A JSON value as the port's object: messages by role, model events and blocks by type; anything else unchanged."""
    if not isinstance(value, dict):
        return each(value, to_impl)
    kind, name = classify(value, "pp-ai", _ROLES)
    cls = {"message": _ROLES, "event": _EVENTS, "block": _BLOCKS}.get(kind, {}).get(name)
    return _build(cls, value) if cls is not None else each(value, to_impl)


def to_json(value: Any) -> Any:
    """The port's object as upstream's JSON: camelCase keys, unset (None) fields and empty diagnostics absent."""
    if not (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        return each(value, to_json)
    fields = ((field.name, getattr(value, field.name)) for field in dataclasses.fields(value))
    return {
        camel(name): to_json(item)
        for name, item in fields
        if item is not None and not name.startswith("_") and not (name == "diagnostics" and not item)
    }


def _result(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return pi_agent.AgentToolResult(content=value.get("content") or [], details=value.get("details"), terminate=value.get("terminate"))


def AgentTool(*, name: str, label: str, description: str, parameters: Any, execute: Any, execution_mode: Any = None) -> Any:
    """The port's ``AgentTool``, whose ``execute`` hands back an ``AgentToolResult``."""

    async def run(tool_call_id: Any, params: Any, signal: Any, on_update: Any) -> Any:
        return _result(await execute(tool_call_id, params, signal, lambda partial: on_update(_result(partial))))

    return pi_agent.AgentTool(
        name=name, label=label, description=description, parameters=parameters, execute=run, execution_mode=execution_mode
    )


def _hook(hook: Any, result_type: Any, renamed: dict[str, str]) -> Any:
    async def call(context: Any, signal: Any = None) -> Any:
        answer = await hook(context, signal)
        return None if answer is None else result_type(**{renamed.get(key, key): item for key, item in answer.items()})

    return call


def _model(model: dict[str, Any]) -> Any:
    model_fields = {field.name for field in dataclasses.fields(ai_types.Model)} - {"cost"}
    return ai_types.Model(**{snake(key): item for key, item in model.items() if snake(key) in model_fields})


def _hooks(config: dict[str, Any]) -> dict[str, Any]:
    hooks: dict[str, Any] = {}
    if "before_tool_call" in config:
        hooks["before_tool_call"] = _hook(config["before_tool_call"], pi_agent.BeforeToolCallResult, {})
    if "after_tool_call" in config:
        hooks["after_tool_call"] = _hook(config["after_tool_call"], pi_agent.AfterToolCallResult, {"isError": "is_error"})
    return hooks


def _config(config: dict[str, Any]) -> Any:
    options: dict[str, Any] = {"model": _model(config["model"]), "convert_to_llm": config["convert_to_llm"]}
    options.update({key: config[key] for key in ("tool_execution", "get_steering_messages", "get_follow_up_messages") if key in config})
    return pi_agent.AgentLoopConfig(**options, **_hooks(config))


def _context(context: dict[str, Any]) -> Any:
    return pi_agent.AgentContext(messages=context["messages"], tools=context.get("tools"))  # the very list: continuing grows it


def run_agent_loop(prompts: Any, context: Any, config: Any, emit: Any, signal: Any, stream_fn: Any) -> Any:
    return pi_agent.run_agent_loop(prompts, _context(context), _config(config), emit, signal, stream_fn)


def agent_loop(prompts: Any, context: Any, config: Any, signal: Any, stream_fn: Any) -> Any:
    return pi_agent.agent_loop(prompts, _context(context), _config(config), signal, stream_fn)


def run_agent_loop_continue(context: Any, config: Any, emit: Any, signal: Any, stream_fn: Any) -> Any:
    return pi_agent.run_agent_loop_continue(_context(context), _config(config), emit, signal, stream_fn)


def agent_loop_continue(context: Any, config: Any, signal: Any, stream_fn: Any) -> Any:
    return pi_agent.agent_loop_continue(_context(context), _config(config), signal, stream_fn)


def Agent(options: dict[str, Any]) -> Any:
    """The port's ``Agent``: keyword options, and a ``MutableAgentState`` made from ``initial_state``."""
    initial = options["initial_state"]
    state_type = importlib.import_module("pi_agent.agent").MutableAgentState
    state = state_type(system_prompt=initial.get("system_prompt", ""), model=_model(initial["model"]))
    state.thinking_level = initial.get("thinking_level", "off")
    state.tools = initial.get("tools") or []
    state.messages = initial.get("messages") or []
    kept = {key: options[key] for key in ("steering_mode", "follow_up_mode", "tool_execution") if key in options}
    return pi_agent.Agent(options["stream_fn"], initial_state=state, **kept, **_hooks(options))


def adapter() -> Any:
    """``--impl python:pypi_ports.pp_agent_core:adapter``."""
    return adapter_for(__name__, "pp-agent-core")
