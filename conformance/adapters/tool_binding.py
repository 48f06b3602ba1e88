"""The chapter 06 operations of the in-process binding: ``object_schema``, ``tool_registry``, ``execute_tool_call``.

A binding for chapter 06 exposes, besides the chapter 03/04 names (:mod:`.binding`):

================================= =====================================================================
binding name                      course
================================= =====================================================================
``string_value``                  ``stringValue``; ``optional_string``, ``optional_positive_integer``
``object_schema(shape)``          ``objectSchema(shape)``: ``.json_schema`` (``jsonSchema``), ``.parse(value)``
``ToolRegistry(tools=None)``      ``new ToolRegistry(tools?)``: ``register``, ``get``, ``list``, ``definitions``
``execute_tool_call(call, registry, context=None)``  ``executeToolCall``, awaitable
================================= =====================================================================

The tools are the adapter's own *scripted tools* (never student code): objects with ``name``,
``description``, ``schema`` and an async ``execute(params, context)`` that plays the case's
script (report progress, return, throw) and records what it received. A context is a dict
with the IR's names (``callId``, ``signal``, ``reportProgress``). A parse result reports its
keys separately, because an optional key that was missing holds nothing (None) and JSON
cannot show a key without a value (spec/spec.md, Notes for porters).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.binding_part import BindingPart
from conformance.adapters.event_loop import run_coroutine, wait_settled
from conformance.adapters.interface import DEFAULT_SETTLE_DEADLINE_S, HarnessError, ImplementationThrew, OperationNotSupported
from conformance.adapters.port_calls import not_supported
from conformance.common.jsontypes import JsonObject, JsonValue

_VALIDATORS = {"string": "string_value", "optional_string": "optional_string", "optional_positive_integer": "optional_positive_integer"}


def error_message(error: BaseException) -> str:
    """What the course's code calls an error's message: its text, without the type."""
    return str(error)


def parsed_view(value: JsonValue) -> tuple[JsonValue, JsonValue]:
    """A parse result as ``(value without the keys that hold nothing, its keys in order)``; keys None for a non-object."""
    if not isinstance(value, dict):
        return value, None
    return {key: item for key, item in value.items() if item is not None}, list(value)


@dataclass
class _Received:
    """What one scripted tool's ``execute`` was given."""

    tool: str
    params: JsonValue
    param_keys: JsonValue
    call_id: JsonValue
    signal: str
    report_progress: str


@dataclass
class _ToolRun:
    """What a case's scripted tools share: what they received, and the identities they compare with."""

    to_impl: Callable[[JsonValue], Any]
    to_json: Callable[[Any, str], JsonValue]
    signal: Any = None
    report_progress: Any = None
    received: list[_Received] = field(default_factory=list)

    def identity(self, given: Any, expected: Any) -> str:
        """``same`` for the very object, ``absent`` for none, ``other`` for another one."""
        if given is None:
            return "absent"
        return "same" if expected is not None and given is expected else "other"


def _context_field(context: Any, name: str) -> Any:
    if isinstance(context, dict):
        return context.get(name)
    return getattr(context, name, None)


class ScriptedTool:
    """A tool the adapter builds from a case: it plays its script and records what it received."""

    def __init__(self, spec: JsonObject, schema: Any, run: _ToolRun) -> None:
        self.name = str(spec["name"])
        self.description = str(spec["description"])
        self.schema = schema
        self._script: list[Any] = list(spec.get("script") or [])  # type: ignore[arg-type]
        self._run = run

    async def execute(self, params: Any, context: Any) -> Any:
        """Record what arrived, then play the script; without a ``return`` the output is ``{content: []}``."""
        run = self._run
        value, keys = parsed_view(run.to_json(params, "the parameters the tool received"))
        call_id = _context_field(context, "callId")
        progress = _context_field(context, "reportProgress")
        run.received.append(
            _Received(
                self.name,
                value,
                keys,
                call_id if isinstance(call_id, str) or call_id is None else repr(call_id),
                run.identity(_context_field(context, "signal"), run.signal),
                run.identity(progress, run.report_progress),
            )
        )
        for action in self._script:
            if "progress" in action:
                if callable(progress):
                    progress(run.to_impl(action["progress"]))
            elif "throw" in action:
                raise RuntimeError(action["throw"])
            else:
                output = dict(action["return"])
                output["content"] = run.to_impl(output["content"])
                return output
        return {"content": []}


class _OpaqueSchema:
    """A schema with a parse that returns its input and no JSON Schema (TOOL-REG-5's default)."""

    def parse(self, value: Any) -> Any:
        return value


class ToolContractOperations(BindingPart):
    """The chapter 06 operations; :class:`~conformance.adapters.binding.BindingAdapter` supplies the helpers."""

    name: str = "python"
    settle_deadline_s: float = DEFAULT_SETTLE_DEADLINE_S

    # -- the port's functions, with their errors' messages kept ---------------------------------

    def _attempt(self, function: Callable[..., Any], what: str, *args: Any) -> tuple[Any, str | None]:
        """``(value, None)``, or ``(None, message)`` when the port raised; NotImplementedError skips the case."""
        try:
            return function(*args), None
        except NotImplementedError as error:
            raise not_supported(what, error) from error
        except Exception as error:
            return None, error_message(error)

    def _method(self, target: Any, owner: str, name: str) -> Callable[..., Any]:
        method = getattr(target, name, None)
        if not callable(method):
            raise OperationNotSupported(f"{self.name}: {owner} has no {name}")
        return method  # type: ignore[no-any-return]

    def _schema(self, spec: Any) -> Any:
        """The tool schema a case names: ``object_schema`` of a shape, or an opaque one."""
        if "shape" not in spec:
            return _OpaqueSchema()
        return self._object_schema(spec["shape"])

    def _object_schema(self, shape: JsonObject) -> Any:
        validators = {key: self._api(_VALIDATORS[str(name)]) for key, name in shape.items()}
        schema, error = self._attempt(self._api("object_schema"), "object_schema", validators)
        if error is not None:
            raise ImplementationThrew(f"object_schema() threw {error}")
        return schema

    # -- object_schema (lab 6.1) --------------------------------------------------------------

    def object_schema(self, input: JsonObject) -> JsonObject:
        """``objectSchema(shape)``: its JSON Schema, and, when the case gives a value, what ``parse`` makes of it."""
        schema = self._object_schema(input["shape"])  # type: ignore[arg-type]
        json_schema = _context_field(schema, "json_schema")
        observation: JsonObject = {"json_schema": self.to_json(json_schema, "json_schema"), "value": None, "keys": None, "error": None}
        unchanged = True
        if "value" in input:
            value = copy.deepcopy(input["value"])
            before = self._fingerprint(value)
            parsed, error = self._attempt(self._method(schema, "the schema", "parse"), "parse", value)
            if error is None:
                observation["value"], observation["keys"] = parsed_view(self.to_json(parsed, "the value parse() returned"))
            observation["error"] = error
            unchanged = self._fingerprint(value) == before
        observation["input_unchanged"] = unchanged
        return observation

    # -- tool_registry (lab 6.2) --------------------------------------------------------------

    def tool_registry(self, input: JsonObject, steps: list[JsonObject]) -> JsonObject:
        """A registry scenario over the case's labelled tools: construct, register, get, list, definitions."""
        run = _ToolRun(self.to_impl, self.to_json)
        specs: dict[str, Any] = dict(input["tools"])  # type: ignore[arg-type]
        tools = {label: ScriptedTool(spec, self._schema(spec["schema"]), run) for label, spec in specs.items()}
        registry: list[Any] = []
        return {"steps": [self._registry_step(step, tools, registry) for step in steps]}

    def _registry_step(self, step: JsonObject, tools: dict[str, ScriptedTool], registry: list[Any]) -> JsonObject:
        action = step["action"]
        if action == "construct":
            arguments = [[_tool(tools, label) for label in step["tools"]]] if "tools" in step else []  # type: ignore[union-attr]
            created, error = self._attempt(self._api("ToolRegistry"), "ToolRegistry", *arguments)
            registry[:] = [] if error is not None else [created]
            return {"error": error}
        if not registry:
            raise ImplementationThrew("there is no registry: construct it first (new ToolRegistry() threw or no construct step ran)")
        target = registry[0]
        if action == "register":
            return {"error": self._attempt(self._method(target, "ToolRegistry", "register"), "register", _tool(tools, step["tool"]))[1]}
        if action == "get":
            found, error = self._attempt(self._method(target, "ToolRegistry", "get"), "get", step["name"])
            if error is not None:
                raise ImplementationThrew(f"ToolRegistry.get() threw {error}")
            return {"tool": _label(tools, found)}
        if action == "list":
            return self._list(target, tools)
        if action == "definitions":
            value, error = self._attempt(self._method(target, "ToolRegistry", "definitions"), "definitions")
            if error is not None:
                raise ImplementationThrew(f"ToolRegistry.definitions() threw {error}")
            return {"value": self.to_json(list(value), "definitions()")}
        raise HarnessError(f"unknown tool_registry action {action!r}")

    def _list(self, target: Any, tools: dict[str, ScriptedTool]) -> JsonObject:
        method = self._method(target, "ToolRegistry", "list")
        first, error = self._attempt(method, "list")
        second, again = self._attempt(method, "list")
        if error is not None or again is not None:
            raise ImplementationThrew(f"ToolRegistry.list() threw {error or again}")
        labels: list[JsonValue] = [_label(tools, tool) for tool in first]
        return {"tools": labels, "fresh_array": first is not second}

    # -- execute_tool_call (lab 6.3) ----------------------------------------------------------

    def execute_tool_call(self, input: JsonObject) -> JsonObject:
        """One ``executeToolCall`` over a registry of the case's scripted tools: the result and what each tool received."""
        observation: JsonObject = run_coroutine(self._execute(input))
        return observation

    async def _execute(self, input: JsonObject) -> JsonObject:
        run = _ToolRun(self.to_impl, self.to_json)
        registry, error = self._attempt(self._api("ToolRegistry"), "ToolRegistry")
        if error is not None:
            raise ImplementationThrew(f"new ToolRegistry() threw {error}")
        specs: list[Any] = list(input["tools"])  # type: ignore[arg-type]
        for spec in specs:
            tool = ScriptedTool(spec, self._schema(spec["schema"]), run)
            if self._attempt(self._method(registry, "ToolRegistry", "register"), "register", tool)[1] is not None:
                raise ImplementationThrew(f"register({tool.name}) threw")
        progress: list[JsonValue] = []
        arguments: list[Any] = [self.to_impl(input["call"]), registry]
        if "context" in input:
            arguments.append(self._tool_context(input["context"], run, progress))  # type: ignore[arg-type]
        result, error = await self._settled(self._api("execute_tool_call"), arguments)
        return {
            "result": None if error is not None else self.to_json(result, "the result executeToolCall() resolved with"),
            "error": error,
            "received": [vars(record) for record in run.received],
            "progress": progress,
        }

    def _tool_context(self, spec: JsonObject, run: _ToolRun, progress: list[JsonValue]) -> dict[str, Any]:
        """The caller's context: a signal of an AbortController and/or a progress function that records."""
        context: dict[str, Any] = {}
        if spec.get("signal"):
            run.signal = context["signal"] = self._api("AbortController")().signal
        if spec.get("report_progress"):

            def report_progress(content: Any) -> None:
                progress.append(self.to_json(content, "the progress a tool reported"))

            run.report_progress = context["reportProgress"] = report_progress
        return context

    async def _settled(self, function: Callable[..., Any], arguments: list[Any]) -> tuple[Any, str | None]:
        """Await what ``function(*arguments)`` returns, within the settle deadline: ``(value, None)`` or ``(None, message)``."""
        awaitable, error = self._attempt(function, "execute_tool_call", *arguments)
        if error is not None:
            return None, f"execute_tool_call() threw synchronously: {error}"
        future = asyncio.ensure_future(awaitable)
        if not await wait_settled(future, self.settle_deadline_s):
            future.cancel()
            return None, "executeToolCall() never settled"
        if future.exception() is not None:
            return None, error_message(future.exception())
        return future.result(), None


def _tool(tools: dict[str, ScriptedTool], label: JsonValue) -> ScriptedTool:
    try:
        return tools[str(label)]
    except KeyError:
        raise HarnessError(f"no tool labelled {label!r} in the case's tools (known: {', '.join(tools)})") from None


def _label(tools: dict[str, ScriptedTool], found: Any) -> str | None:
    """The label of the very tool object ``found``, ``other`` for an object the case did not give, None for none."""
    if found is None:
        return None
    return next((label for label, tool in tools.items() if tool is found), "other")
