"""Python binding hooks for ports of upstream pi-ai 1.x (profile ``pi-ai-1``), reached in-process.

A port exposes the upstream API under Python names, with IR values as plain dicts that use the
IR's own field names (``spec/pi-ai-1/spec.md``):

============================== =============================================
binding name                   upstream
============================== =============================================
``content_text``               ``contentText(content, separator?)``
``get_system_message_text``    ``getSystemMessageText(message)``
``render_system_message_update`` ``renderSystemMessageUpdate(message)``
``get_current_system_message`` ``getCurrentSystemMessage(messages)`` (None for nothing)
``get_current_system_prompt``  ``getCurrentSystemPrompt(messages)``
``get_current_tools``          ``getCurrentTools(messages)``
``normalize_context``          ``normalizeContext(context)``
``faux_text``, ``faux_thinking``, ``faux_tool_call(name, arguments, id=None)``
``faux_assistant_message(content, options=None)``
``EventStream``, ``AssistantMessageEventStream`` (as for the course binding)
============================== =============================================

Plug it in with a module of your own, e.g. ``my_port/conformance.py``::

    from conformance.adapters.pi_ai_binding import PiAiBindingAdapter
    import my_port
    ADAPTER = PiAiBindingAdapter(my_port, name="my-port")

and run ``pi-conformance run --profile pi-ai-1 --impl python:my_port.conformance:ADAPTER``.
Anything the binding lacks is *skipped* with its name. The faux provider (``faux_provider``)
is not bound yet: those cases are skipped with that reason.
"""

from __future__ import annotations

import copy
from typing import Any

from conformance.adapters.binding import BindingAdapter
from conformance.jsontypes import JsonObject, JsonValue


class PiAiBindingAdapter(BindingAdapter):
    """A :class:`BindingAdapter` that states profile ``pi-ai-1`` and maps its operations onto upstream's names."""

    def __init__(self, binding: Any, name: str = "python-pi-ai", version: str = "") -> None:
        super().__init__(binding, name=name, version=version)
        self.profile = "pi-ai-1"

    def _pure_call(self, name: str, *arguments: Any) -> JsonObject:
        value, unchanged = self._pure_many(name, list(arguments))
        return {"value": value, "input_unchanged": unchanged}

    def _pure_many(self, name: str, arguments: list[Any]) -> tuple[JsonValue, bool]:
        """Call on private copies (the port's objects, through ``to_impl``); report whether the first argument changed."""
        copies = [self.to_impl(argument) for argument in arguments]
        before = self._fingerprint(copies[0])
        value = self.to_json(self._call(name, *copies), f"the value {name}() returned")
        return value, self._fingerprint(copies[0]) == before

    # -- messages ----------------------------------------------------------------------------

    def content_text(self, input: JsonObject) -> JsonObject:
        arguments = [input["content"], input["separator"]] if "separator" in input else [input["content"]]
        return self._pure_call("content_text", *arguments)

    def system_message_text(self, input: JsonObject) -> JsonObject:
        return self._pure_call("get_system_message_text", input["message"])

    def render_system_message_update(self, input: JsonObject) -> JsonObject:
        return self._pure_call("render_system_message_update", input["message"])

    def faux_block(self, input: JsonObject) -> JsonObject:
        kind = input.get("kind")
        if kind == "text":
            value = self._call("faux_text", input["text"])
        elif kind == "thinking":
            value = self._call("faux_thinking", input["thinking"])
        else:
            extra = {"id": input["id"]} if "id" in input else {}
            value = self._call("faux_tool_call", input["name"], copy.deepcopy(input["arguments"]), **extra)
        return {"value": self.to_json(value, "the block")}

    def faux_message(self, input: JsonObject) -> JsonObject:
        arguments: list[Any] = [self.to_impl(input["content"])]
        if "options" in input:
            arguments.append(copy.deepcopy(input["options"]))
        return {"value": self.to_json(self._call("faux_assistant_message", *arguments), "faux_assistant_message()")}

    # -- system replay -----------------------------------------------------------------------

    def current_system_message(self, input: JsonObject) -> JsonObject:
        observed = self._pure_call("get_current_system_message", input["messages"])
        value = observed["value"]
        sections = value.get("sections") if isinstance(value, dict) else None
        observed["section_order"] = list(sections) if isinstance(sections, dict) else None
        return observed

    def current_system_prompt(self, input: JsonObject) -> JsonObject:
        return self._pure_call("get_current_system_prompt", input["messages"])

    def current_tools(self, input: JsonObject) -> JsonObject:
        return self._pure_call("get_current_tools", input["messages"])

    def normalize_context(self, input: JsonObject) -> JsonObject:
        return self._pure_call("normalize_context", input["context"])
