"""Broken variants of the chapter 06 reference (``reference_impl/tool.py``), one bug each.

Each :class:`ToolVariant` names the clause its bug breaks; ``tests/judging/test_tool_variants.py``
proves that the variant fails its named case and only cases that cite that clause.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import reference_impl
from reference_impl import tool
from tests.support.variants import reference_binding


@dataclass(frozen=True)
class ToolVariant:
    """A broken binding, the clause it breaks, and one case that must fail."""

    name: str
    binding: types.SimpleNamespace
    clause: str
    failing_case: str
    message_fragment: str


class _SchemaKeepingUnknownKeys(tool.ObjectSchema):
    def parse(self, value: Any) -> dict[str, Any]:
        parsed = super().parse(value)
        return {**value, **parsed}


class _SchemaMutatingInput(tool.ObjectSchema):
    def parse(self, value: Any) -> dict[str, Any]:
        parsed = super().parse(value)
        for key in [key for key in value if key not in self.shape]:
            del value[key]
        return parsed


class _SchemaDroppingMissingKeys(tool.ObjectSchema):
    def parse(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ValueError("参数必须是 object")
        return {
            key: validator(value.get(key, tool.MISSING)) for key, validator in self.shape.items() if key in value or not validator.optional
        }


class _SchemaCheckingLastKeyFirst(tool.ObjectSchema):
    def parse(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ValueError("参数必须是 object")
        for key, validator in reversed(list(self.shape.items())):
            validator(value.get(key, tool.MISSING))
        return super().parse(value)


class _SchemaAcceptingArrays(tool.ObjectSchema):
    def parse(self, value: Any) -> dict[str, Any]:
        return super().parse({} if isinstance(value, list) else value)


class _SchemaRequiringEverything(tool.ObjectSchema):
    def __init__(self, shape: Mapping[str, Any]) -> None:
        super().__init__(shape)
        self.json_schema["required"] = list(self.shape)


def _optional_string_null_is_missing(value: Any) -> Any:
    return None if value is None else tool.optional_string(value)


def _positive_integer_from_zero(value: Any) -> Any:
    return value if value == 0 and not isinstance(value, bool) else tool.optional_positive_integer(value)


class _RegistryOverwriting(tool.ToolRegistry):
    def register(self, tool_: Any) -> None:
        self._tools[tool_.name] = tool_


class _RegistrySortingByName(tool.ToolRegistry):
    def list(self) -> list[Any]:
        return sorted(super().list(), key=lambda item: item.name)


class _RegistryWithoutDefaultParameters(tool.ToolRegistry):
    def definitions(self) -> list[dict[str, Any]]:
        return [
            {**definition, "parameters": getattr(item.schema, "json_schema", None) or {}}
            for definition, item in zip(super().definitions(), self.list(), strict=True)
        ]


async def _execute_unknown_tool_raises(call: Any, registry: Any, context: Any = None) -> Any:
    if registry.get(call["name"]) is None:
        raise LookupError(f"unknown tool {call['name']}")
    return await tool.execute_tool_call(call, registry, context)


async def _execute_with_raw_arguments(call: Any, registry: Any, context: Any = None) -> Any:
    found = registry.get(call["name"])
    if found is None or not isinstance(call["arguments"], dict):
        return await tool.execute_tool_call(call, registry, context)
    try:
        found.schema.parse(call["arguments"])  # validated, but the raw arguments are passed on
    except ValueError:
        return await tool.execute_tool_call(call, registry, context)
    try:
        output = await found.execute(call["arguments"], {**(context or {}), "callId": call["id"]})
    except Exception as error:
        return tool.failed_result(call, error)
    return {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call["name"],
        **output,
        "isError": output.get("isError", False),
        "timestamp": 1,
    }


async def _execute_wrapping_progress(call: Any, registry: Any, context: Any = None) -> Any:
    given = dict(context or {})
    if "reportProgress" in given:
        report = given["reportProgress"]
        given["reportProgress"] = lambda content: report(content)
    return await tool.execute_tool_call(call, registry, given)


async def _execute_with_type_in_message(call: Any, registry: Any, context: Any = None) -> Any:
    result = await tool.execute_tool_call(call, registry, context)
    if result["isError"] and isinstance(result.get("details"), dict) and "error" in result["details"]:
        message = f"ValueError: {result['details']['error']}"
        result["content"] = [reference_impl.text(f"Tool {call['name']} failed: {message}")]
        result["details"] = {"error": message}
    return result


async def _execute_dropping_is_error_default(call: Any, registry: Any, context: Any = None) -> Any:
    result = await tool.execute_tool_call(call, registry, context)
    if result["isError"] is False:
        del result["isError"]
    return result


async def _execute_overriding_domain_errors(call: Any, registry: Any, context: Any = None) -> Any:
    result = await tool.execute_tool_call(call, registry, context)
    if result["isError"] and "error" not in (result.get("details") or {}):
        text = " ".join(block["text"] for block in result["content"])
        result["content"] = [reference_impl.text(f"Tool {call['name']} failed: {text}")]
    return result


TOOL_VARIANTS: list[ToolVariant] = [
    ToolVariant(
        "parse-keeps-unknown-keys",
        reference_binding(object_schema=_SchemaKeepingUnknownKeys),
        "TOOL-SCHEMA-3",
        "tool-schema-course-parse-drops-unknown",
        'unexpected key "ignored"',
    ),
    ToolVariant(
        "parse-mutates-input",
        reference_binding(object_schema=_SchemaMutatingInput),
        "TOOL-SCHEMA-5",
        "tool-schema-parse-leaves-input-alone",
        "input_unchanged",
    ),
    ToolVariant(
        "parse-drops-missing-optional-keys",
        reference_binding(object_schema=_SchemaDroppingMissingKeys),
        "TOOL-SCHEMA-3",
        "tool-schema-course-parse-optional-keys-present",
        "keys",
    ),
    ToolVariant(
        "parse-checks-last-key-first",
        reference_binding(object_schema=_SchemaCheckingLastKeyFirst),
        "TOOL-SCHEMA-4",
        "tool-schema-first-failing-key-in-shape-order",
        "error",
    ),
    ToolVariant(
        "parse-accepts-arrays", reference_binding(object_schema=_SchemaAcceptingArrays), "TOOL-SCHEMA-2", "tool-schema-parse-array", "error"
    ),
    ToolVariant(
        "json-schema-requires-optional-keys",
        reference_binding(object_schema=_SchemaRequiringEverything),
        "TOOL-SCHEMA-1",
        "tool-schema-course-json-schema",
        "json_schema.required",
    ),
    ToolVariant(
        "optional-string-null-is-missing",
        reference_binding(optional_string=tool.Validator(_optional_string_null_is_missing, {"type": "string"}, optional=True)),
        "TOOL-VAL-2",
        "tool-schema-optional-string-null-rejected",
        "error",
    ),
    ToolVariant(
        "positive-integer-accepts-zero",
        reference_binding(
            optional_positive_integer=tool.Validator(_positive_integer_from_zero, {"type": "integer", "minimum": 1}, optional=True)
        ),
        "TOOL-VAL-3",
        "tool-schema-course-limit-zero",
        "error",
    ),
    ToolVariant(
        "duplicate-register-allowed",
        reference_binding(ToolRegistry=_RegistryOverwriting),
        "TOOL-REG-2",
        "tool-reg-course-duplicate-echo",
        "error",
    ),
    ToolVariant(
        "list-sorted-by-name",
        reference_binding(ToolRegistry=_RegistrySortingByName),
        "TOOL-REG-4",
        "tool-reg-list-registration-order",
        "tools[0]",
    ),
    ToolVariant(
        "definitions-default-parameters-empty",
        reference_binding(ToolRegistry=_RegistryWithoutDefaultParameters),
        "TOOL-REG-5",
        "tool-reg-definitions-default-parameters",
        "parameters",
    ),
    ToolVariant(
        "unknown-tool-not-normalized",
        reference_binding(execute_tool_call=_execute_unknown_tool_raises),
        "TOOL-EXEC-3",
        "tool-exec-course-unknown-tool",
        "error",
    ),
    ToolVariant(
        "tool-gets-raw-arguments",
        reference_binding(execute_tool_call=_execute_with_raw_arguments),
        "TOOL-EXEC-6",
        "tool-exec-params-are-parsed",
        "received[0].params",
    ),
    ToolVariant(
        "progress-function-wrapped",
        reference_binding(execute_tool_call=_execute_wrapping_progress),
        "TOOL-EXEC-6",
        "tool-exec-course-context-and-domain-error",
        "report_progress",
    ),
    ToolVariant(
        "failure-message-with-type",
        reference_binding(execute_tool_call=_execute_with_type_in_message),
        "TOOL-EXEC-2",
        "tool-exec-course-tool-throws",
        "result.content[0].text",
    ),
    ToolVariant(
        "is-error-false-left-out",
        reference_binding(execute_tool_call=_execute_dropping_is_error_default),
        "TOOL-EXEC-7",
        "tool-exec-course-success",
        "result.isError",
    ),
    ToolVariant(
        "domain-error-rewritten",
        reference_binding(execute_tool_call=_execute_overriding_domain_errors),
        "TOOL-EXEC-7",
        "tool-exec-course-context-and-domain-error",
        "result.content[0].text",
    ),
]
