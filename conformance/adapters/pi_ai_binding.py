"""Python binding hooks for ports of upstream pi-ai 1.x (profile ``pi-ai-1``), reached in-process.

A port exposes the upstream API under Python names, with IR values as plain dicts that use the
IR's own field names (``spec/pi-ai-1/spec.md``), options dicts included (``tokenSize``,
``stopReason``, ``sessionId``):

================================================== ==========================================================================
binding name                                       upstream
================================================== ==========================================================================
``content_text``                                   ``contentText(content, separator?)``
``get_system_message_text``                        ``getSystemMessageText(message)``
``render_system_message_update``                   ``renderSystemMessageUpdate(message)``
``get_current_system_message``                     ``getCurrentSystemMessage(messages)`` (None for nothing)
``get_current_system_prompt``                      ``getCurrentSystemPrompt(messages)``
``get_current_tools``                              ``getCurrentTools(messages)``
``normalize_context``                              ``normalizeContext(context)``
``faux_text``, ``faux_thinking``                   ``fauxText(text)``, ``fauxThinking(thinking)``
``faux_tool_call(name, arguments, id=None)``       ``fauxToolCall(name, arguments, {id})``
``faux_assistant_message(content, options=None)``  ``fauxAssistantMessage(content, options)``
``EventStream``                                    ``new EventStream(isComplete, extractResult)`` (as for the course binding:
``AssistantMessageEventStream``                    ``push``, ``end(result?)``, ``async for``, an awaitable ``result()``)
``AbortController``                                ``new AbortController()``: ``abort()`` and ``signal``
``faux_provider(options=None)``                    ``fauxProvider(options)``, a handle with:
``.provider.stream(model, context, options=None)`` ``provider.stream(model, context, {signal?, sessionId?, cacheRetention?})``
``.get_model(id=None)``                            ``getModel(id?)`` (None for an unknown id)
``.set_responses(steps)``                          ``setResponses(steps)``
``.append_responses(steps)``                       ``appendResponses(steps)``
``.get_pending_response_count()``                  ``getPendingResponseCount()``
``.state.call_count``                              ``state.callCount``
================================================== ==========================================================================

A faux response step is a message, or a function called as ``step(context, options, state,
model)`` that returns one (or an awaitable of one). Stream options are a dict with upstream's
keys: ``signal`` (an ``AbortController``'s), ``sessionId`` and ``cacheRetention``; the binding
passes none when the step asks for none.

Plug it in with a module of your own, e.g. ``my_port/conformance.py``::

    from conformance.adapters.pi_ai_binding import PiAiBindingAdapter
    import my_port
    ADAPTER = PiAiBindingAdapter(my_port, name="my-port")

and run ``pi-conformance run --profile pi-ai-1 --impl python:my_port.conformance:ADAPTER``.
Anything the binding lacks is *skipped* with its name. ``examples/pi_ai_port`` is a complete
port bound this way.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.binding import BindingAdapter, Call, abort_call
from conformance.adapters.event_loop import run_coroutine, settle
from conformance.adapters.interface import HarnessError, OperationNotSupported
from conformance.adapters.port_calls import not_supported
from conformance.adapters.stream_observer import describe_exception
from conformance.common.jsontypes import JsonObject, JsonValue

_SIGNAL_MODES = ("none", "aborted", "controller")
_CALL_ACTIONS = frozenset({"abort", "start_consumer", "consume", "result"})
_TERMINAL_FIELDS = {"done": "message", "error": "error"}


@dataclass
class _Responses:
    """What the binding handed to the provider as response steps, and what factories recorded."""

    recorded: list[JsonValue]
    given: list[Any]  # the step objects handed over, to tell whether playing changed them
    given_before: str = ""


@dataclass
class _FauxPlay:
    """One faux_provider case as it is played: the provider's handle, its response steps, the calls made so far by name."""

    faux: Any
    responses: _Responses
    calls: dict[str, Call] = field(default_factory=dict)


class PiAiBindingAdapter(BindingAdapter):
    """A :class:`BindingAdapter` that states profile ``pi-ai-1`` and maps its operations onto upstream's names."""

    def __init__(self, binding: Any, name: str = "python-pi-ai", version: str = "") -> None:
        super().__init__(binding, name=name, version=version)
        self.profile = "pi-ai-1"

    def _pure_call(self, name: str, *arguments: Any, identities: Callable[[Any, Any], JsonObject] | None = None) -> JsonObject:
        """Call on private copies (the port's objects, through ``to_impl``); report whether the first argument changed.

        ``identities(returned, first_argument)`` adds observations about object identity,
        taken before the value is turned into JSON.
        """
        copies = [self.to_impl(argument) for argument in arguments]
        before = self._fingerprint(copies[0])
        returned = self._call(name, *copies)
        extra = identities(returned, copies[0]) if identities is not None else {}
        value = self.to_json(returned, f"the value {name}() returned")
        return {"value": value, "input_unchanged": self._fingerprint(copies[0]) == before, **extra}

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
        observed = self._pure_call(
            "get_current_system_message",
            input["messages"],
            identities=lambda returned, messages: {"tools_are_input": tools_are_input(field_of(returned, "toolsAdded"), messages)},
        )
        value = observed["value"]
        sections = value.get("sections") if isinstance(value, dict) else None
        observed["section_order"] = list(sections) if isinstance(sections, dict) else None
        return observed

    def current_system_prompt(self, input: JsonObject) -> JsonObject:
        return self._pure_call("get_current_system_prompt", input["messages"])

    def current_tools(self, input: JsonObject) -> JsonObject:
        def same_tools(returned: Any, messages: Any) -> JsonObject:
            return {"tools_are_input": tools_are_input(returned, messages)}

        return self._pure_call("get_current_tools", input["messages"], identities=same_tools)

    def normalize_context(self, input: JsonObject) -> JsonObject:
        def same_messages(returned: Any, context: Any) -> JsonObject:
            messages = field_of(context, "messages")
            return {"messages_are_input": messages is not None and field_of(returned, "messages") is messages}

        return self._pure_call("normalize_context", input["context"], identities=same_messages)

    # -- the faux provider -------------------------------------------------------------------

    def faux_provider(self, input: JsonObject, steps: list[JsonObject]) -> JsonObject:
        return {"steps": run_coroutine(self._play_faux_provider(input, steps))}

    async def _play_faux_provider(self, input: JsonObject, steps: list[JsonObject]) -> list[JsonValue]:
        faux = self._call("faux_provider", *([copy.deepcopy(input["options"])] if "options" in input else []))
        play = _FauxPlay(faux, _Responses(recorded=[], given=[]))
        self._set_responses(faux, play.responses, input.get("responses", []), append=False)
        observations: list[JsonValue] = []
        for step in steps:
            observations.append(await self._faux_step(play, step))
        return observations

    async def _faux_step(self, play: _FauxPlay, step: JsonObject) -> JsonObject:
        """One step of a faux_provider case: on one of its calls, or on the provider; its observation."""
        action = step["action"]
        call = play.calls.get(str(step.get("call")))
        if action in _CALL_ACTIONS:
            if call is None:
                raise HarnessError(f"step uses call {step.get('call')!r} before any stream step created it")
            observation = await self._faux_call_step(action, call, step)
        else:
            observation = await self._faux_provider_step(action, play, step)
        if action == "consume" and call is not None and call.stream is not None:
            observation["tool_calls_are_final"] = tool_calls_are_final(call.consumer.received)
        return observation

    async def _faux_call_step(self, action: str, call: Call, step: JsonObject) -> JsonObject:
        """``abort``, ``start_consumer``, ``consume`` (with or without ``abort_after``) or ``result`` on one call."""
        if action == "abort":
            abort_call(call, step)
            return {}
        if action == "consume" and "abort_after" in step:
            return await self._consume_aborting(call, step["abort_after"])
        return await self._call_step(action, call)

    async def _faux_provider_step(self, action: JsonValue, play: _FauxPlay, step: JsonObject) -> JsonObject:
        """A step on the provider itself: a new ``stream`` call, ``settle``, its requests, state or responses."""
        responses = play.responses
        if action == "stream":
            return {"threw": self._faux_stream_call(play, step)}
        if action == "settle":
            await settle()
            return {}
        if action == "requests":
            return {"requests": list(responses.recorded)}
        if action == "state":
            return self._faux_state(play.faux)
        if action in {"set_responses", "append_responses"}:
            self._set_responses(play.faux, responses, step["responses"], append=action == "append_responses")
            return {}
        if action == "check_turns":
            return {"turns_unchanged": self._steps_fingerprint(responses.given) == responses.given_before}
        raise HarnessError(f"unknown faux_provider action {action!r}")

    def _faux_stream_call(self, play: _FauxPlay, step: JsonObject) -> str | None:
        """A ``stream`` step: a new call, named by the step, on the model it asks for; what it threw."""
        arguments = [str(step["model"])] if "model" in step else []
        model = self._call_method(play.faux, "faux_provider()", "get_model", *arguments)
        if model is None:
            raise HarnessError(f"the faux provider has no model {step.get('model')!r}")
        call = Call(None)
        play.calls[str(step["call"])] = call
        return self._faux_stream(play.faux, model, call, step)

    def _faux_state(self, faux: Any) -> JsonObject:
        """``{call_count, pending_responses}``: the handle's ``state.call_count`` and ``get_pending_response_count()``."""
        state: Any = getattr(faux, "state", None)
        if not hasattr(state, "call_count"):
            raise OperationNotSupported(f"{self.name}: faux_provider() returned a handle without state.call_count")
        count = self._call_method(faux, "faux_provider()", "get_pending_response_count")
        return {
            "call_count": self.to_json(state.call_count, "faux_provider().state.call_count"),
            "pending_responses": self.to_json(count, "get_pending_response_count()"),
        }

    def _set_responses(self, faux: Any, responses: _Responses, given: JsonValue, append: bool) -> None:
        """Hand the case's response steps to the provider (``set_responses`` or ``append_responses``)."""
        objects = self._response_steps(given, responses.recorded)
        self._call_method(faux, "faux_provider()", "append_responses" if append else "set_responses", list(objects))
        responses.given = [*responses.given, *objects] if append else objects
        responses.given_before = self._steps_fingerprint(responses.given)

    def _response_steps(self, given: JsonValue, recorded: list[JsonValue]) -> list[Any]:
        """The provider's steps for the case's responses.

        ``{message: M}`` is the message itself; ``{factory: M}`` a function that records the
        context it is called with and returns M; ``{factory_throws: TEXT}`` one that records
        and raises ``Exception(TEXT)``.
        """
        if not isinstance(given, list):
            raise HarnessError("responses must be a list")
        made: list[Any] = []
        for response in given:
            if not isinstance(response, dict):
                raise HarnessError(f"a response is an object, not {response!r}")
            if "message" in response:
                made.append(self.to_impl(response["message"]))
            elif "factory" in response:
                made.append(self._factory(recorded, self.to_impl(response["factory"]), None))
            elif "factory_throws" in response:
                made.append(self._factory(recorded, None, str(response["factory_throws"])))
            else:
                raise HarnessError(f"unknown response form {sorted(response)}")
        return made

    def _factory(self, recorded: list[JsonValue], message: Any, throws: str | None) -> Callable[..., Any]:
        def step(context: Any, options: Any = None, state: Any = None, model: Any = None) -> Any:
            count = self.to_json(getattr(state, "call_count", None), "state.call_count")
            recorded.append({"context": self.to_json(context, "the context"), "call_count": count})
            if throws is not None:
                raise Exception(throws)
            return message

        return step

    def _steps_fingerprint(self, given: list[Any]) -> str:
        """The given steps as they are now: messages through ``to_json``, factories by identity."""
        return "\n".join(f"factory {id(step)}" if callable(step) else self._fingerprint(step) for step in given)

    def _faux_stream(self, faux: Any, model: Any, call: Call, step: JsonObject) -> str | None:
        """Call ``faux.provider.stream()`` as the step asks; the step's ``threw`` observation."""
        signal_mode = step.get("signal", "none")
        if signal_mode not in _SIGNAL_MODES:
            raise HarnessError(f"unknown signal mode {signal_mode!r}")
        self._give_controller(call, signal_mode)
        options: dict[str, Any] = {} if call.controller is None else {"signal": call.controller.signal}
        if "session_id" in step:
            options["sessionId"] = str(step["session_id"])
        if "cache_retention" in step:
            options["cacheRetention"] = str(step["cache_retention"])
        provider = getattr(faux, "provider", None)
        stream = getattr(provider, "stream", None)
        if not callable(stream):
            raise OperationNotSupported(f"{self.name}: faux_provider() returned a handle without provider.stream")
        call.context = self.to_impl(step["context"])
        try:
            call.stream = stream(model, call.context, options) if options else stream(model, call.context)
        except NotImplementedError as error:
            raise not_supported("provider.stream", error) from error
        except Exception as error:
            return describe_exception(error)
        return None

    async def _consume_aborting(self, call: Call, abort_after: JsonValue) -> JsonObject:
        """``consume`` with ``abort_after: N``: abort the call's controller once N events arrived (the harness sums up the end)."""
        if call.stream is None:
            return {"threw": "there is no stream: stream() threw"}
        controller = call.controller
        if controller is None:
            raise HarnessError("abort_after needs a call with signal: controller")
        call.consumer.on_event = lambda count: controller.abort() if count == abort_after else None
        return await self._call_step("consume", call)


def field_of(value: Any, name: str) -> Any:
    """``value[name]`` of a dict, else the attribute ``name`` or its snake_case spelling; None when absent."""
    if isinstance(value, dict):
        return value.get(name)
    snake = "".join(f"_{char.lower()}" if char.isupper() else char for char in name)
    return getattr(value, name, getattr(value, snake, None))


def tools_are_input(tools: Any, messages: Any) -> bool | None:
    """Whether every returned tool is one of the very ``toolsAdded`` objects of the transcript (None: no tools returned)."""
    if not isinstance(tools, list | tuple) or not tools:
        return None
    messages = messages if isinstance(messages, list | tuple) else []
    given = [tool for message in messages for tool in (field_of(message, "toolsAdded") or [])]
    return all(any(tool is known for known in given) for tool in tools)


def tool_calls_are_final(events: list[Any]) -> bool | None:
    """None without a ``toolcall_end``; else whether each one's ``toolCall`` is the very block at its index in the terminal message."""
    ends = [event for event in events if field_of(event, "type") == "toolcall_end"]
    if not ends:
        return None
    last = events[-1]
    message = field_of(last, _TERMINAL_FIELDS.get(str(field_of(last, "type")), "message"))
    blocks = field_of(message, "content")
    blocks = list(blocks) if isinstance(blocks, list | tuple) else []

    def is_final(event: Any) -> bool:
        index = field_of(event, "contentIndex")
        return isinstance(index, int) and 0 <= index < len(blocks) and field_of(event, "toolCall") is blocks[index]

    return all(is_final(event) for event in ends)
