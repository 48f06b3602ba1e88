"""Chapter 06: the tool contract (spec/spec.md section 9).

Validators narrow an unknown value, ``object_schema`` builds a tool's schema from them,
``ToolRegistry`` fixes the tools of a run, and ``execute_tool_call`` turns every call, a
success or an expected failure, into a tool-result message paired with the call.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .ir import text

#: What a validator receives for a missing key (JavaScript's ``undefined``); JSON ``null``
#: (``None``) is a value, not this.
MISSING: Any = object()


class Validator:
    """A validator: a callable that narrows a value or raises, with its JSON Schema and optional flag."""

    def __init__(self, check: Callable[[Any], Any], json_schema: dict[str, Any], optional: bool = False) -> None:
        self._check = check
        self.json_schema = json_schema
        self.optional = optional

    def __call__(self, value: Any) -> Any:
        return self._check(value)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("必须是 string")
    return value


def _optional_string(value: Any) -> str | None:
    return None if value is MISSING else _string(value)


def _optional_positive_integer(value: Any) -> int | float | None:
    if value is MISSING:
        return None
    # bool is an int in Python but not a number in JSON; 2.0 is the integer 2, as in JavaScript.
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if not is_number or value != int(value) or value < 1:
        raise ValueError("必须是正整数")
    number: int | float = value
    return number


string_value = Validator(_string, {"type": "string"})
optional_string = Validator(_optional_string, {"type": "string"}, optional=True)
optional_positive_integer = Validator(_optional_positive_integer, {"type": "integer", "minimum": 1}, optional=True)


class ObjectSchema:
    """``objectSchema(shape)``: a JSON Schema of the shape, and a parse that keeps its keys only."""

    def __init__(self, shape: Mapping[str, Any]) -> None:
        # Kept, not copied: the course's parse reads the shape when it runs, too.
        self.shape = shape
        self.json_schema = {
            "type": "object",
            "properties": {key: validator.json_schema for key, validator in shape.items()},
            "required": [key for key, validator in shape.items() if not validator.optional],
            "additionalProperties": False,
        }

    def parse(self, value: Any) -> dict[str, Any]:
        """The shape's keys in order, each narrowed by its validator; undeclared keys are dropped."""
        if not isinstance(value, dict):
            raise ValueError("参数必须是 object")
        return {key: validator(value.get(key, MISSING)) for key, validator in self.shape.items()}


def object_schema(shape: Mapping[str, Any]) -> ObjectSchema:
    """A schema for an object of the shape's keys (TOOL-SCHEMA-1..5)."""
    return ObjectSchema(shape)


class ToolRegistry:
    """The tools of a run, by name, in registration order.

    A tool is any object with ``name``, ``description``, ``schema`` (with ``parse`` and,
    optionally, ``json_schema``) and an async ``execute(params, context)``.
    """

    def __init__(self, tools: Iterable[Any] = ()) -> None:
        self._tools: dict[str, Any] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Any) -> None:
        """Add ``tool``; a second tool of the same name is an error."""
        if tool.name in self._tools:
            raise ValueError(f"Tool 已存在：{tool.name}")  # noqa: RUF001 (the course's full-width colon)
        self._tools[tool.name] = tool

    def get(self, name: str) -> Any:
        """The tool registered under ``name``, or None."""
        return self._tools.get(name)

    def list(self) -> builtins.list[Any]:
        """The registered tools themselves, in registration order, in a new list."""
        return list(self._tools.values())

    def definitions(self) -> builtins.list[dict[str, Any]]:
        """What a provider sees of each tool: name, description and parameters."""
        return [{"name": tool.name, "description": tool.description, "parameters": _parameters(tool.schema)} for tool in self.list()]


def _parameters(schema: Any) -> Any:
    """A schema's JSON Schema; ``{type: "object"}`` for a schema without one."""
    json_schema = getattr(schema, "json_schema", None)
    return {"type": "object"} if json_schema is None else json_schema


def _now() -> int:
    return int(time.time() * 1000)


def failed_result(call: Mapping[str, Any], error: BaseException) -> dict[str, Any]:
    """The paired failure result of a call: the error's message only, never the error object (TOOL-EXEC-2)."""
    message = str(error)
    return {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call["name"],
        "content": [text(f"Tool {call['name']} failed: {message}")],
        "details": {"error": message},
        "isError": True,
        "timestamp": _now(),
    }


async def execute_tool_call(call: Mapping[str, Any], registry: ToolRegistry, context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run one tool call: lookup, parse, execute, and a paired result for success and failure alike."""
    tool = registry.get(call["name"])
    if tool is None:
        return failed_result(call, ValueError("未知工具"))
    try:
        params = tool.schema.parse(call["arguments"])
        output = await tool.execute(params, {**(context if context is not None else {}), "callId": call["id"]})
    except Exception as error:
        return failed_result(call, error)
    result = {"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"], "content": output["content"]}
    if "details" in output:
        result["details"] = output["details"]
    result["isError"] = output.get("isError", False)
    result["timestamp"] = _now()
    return result
