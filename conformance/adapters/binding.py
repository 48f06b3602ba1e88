"""An adapter for implementations written in Python, reached in-process through a *binding*.

A binding is any object (usually a module) exposing the chapter API under Python names: ``text_of``,
``system_message_text``, ``current_system_message``, ``current_system_prompt``, ``text``, ``user_message``,
``assistant_message``, ``EventStream``, ``AssistantMessageEventStream``, ``ScriptedModel`` and ``AbortController``
(chapters 05, 06, 07: :mod:`.provider_binding`, :mod:`.tool_binding`, :mod:`.loop_binding`; chapter 09's reducer and
Agent: :mod:`.agent_state_binding`, :mod:`.agent_binding`).
IR values are plain dicts with the IR's own field names, or the port's own objects when the binding also has
the hooks ``to_impl(json)`` (a JSON input value to the port's object) and ``to_json(obj)`` (the port's object
to its JSON form). :class:`BindingAdapter` turns that API into observations, playing scenarios on a fresh
asyncio event loop. Mutation checks compare the port's objects (through ``to_json``) before and after a call,
and identity (``same_object_as``) is decided on them. The whole contract: docs/porting.md.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.agent_binding import AgentOperations
from conformance.adapters.agent_state_binding import AgentStateOperations
from conformance.adapters.event_loop import run_coroutine, settle, wait_settled
from conformance.adapters.interface import DEFAULT_SETTLE_DEADLINE_S, HarnessError, ImplementationThrew, OperationNotSupported
from conformance.adapters.port_calls import Refusals, call_port, not_supported
from conformance.adapters.provider_binding import ProviderAdapterOperations
from conformance.adapters.step_changes import apply_change, change_path, mutate_context
from conformance.adapters.stream_observer import Consumer, StreamObserver, describe_exception
from conformance.common.jsontypes import JsonObject, JsonValue

_NO_TERMINAL = object()


def fingerprint(value: Any) -> str:
    """A strict, order-sensitive text form of a value, to tell whether it changed."""
    return json.dumps(value, ensure_ascii=False, default=repr)


def to_json(value: Any, what: str) -> JsonValue:
    """A detached JSON copy of a value the implementation produced."""
    try:
        result: JsonValue = json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise ImplementationThrew(f"{what} is not a JSON value: {error}") from error
    return result


@dataclass
class Call:
    """What a scripted_model scenario knows about one ``stream()`` call."""

    context: Any
    controller: Any = None
    stream: Any = None
    consumer: Consumer = field(default_factory=Consumer)


@dataclass
class _EventStreamState:
    """What an event_stream scenario keeps from step to step."""

    stream: Any
    #: The field of a terminal event (given as JSON) that holds its payload; None for another event.
    terminal_field: Callable[[JsonObject], str | None]
    terminal_payload: Any = _NO_TERMINAL
    end_argument: Any = _NO_TERMINAL
    consumer: Consumer = field(default_factory=Consumer)
    #: The hand-driven iterator, once a ``next`` step created it.
    iterator: list[Any] = field(default_factory=list)


#: scripted_model actions on a call that a ``stream`` step created.
_CALL_ACTIONS = frozenset({"mutate_context", "abort", "start_consumer", "consume", "result", "mutate_result", "context"})


@dataclass
class _ScriptedModelState:
    """What a scripted_model scenario keeps from step to step."""

    model: Any
    turns: Any
    turns_before: str
    calls: dict[str, Call] = field(default_factory=dict)


class BindingAdapter(ProviderAdapterOperations, AgentOperations, AgentStateOperations):
    """Adapter for a Python implementation exposing the chapter API through a binding."""

    def __init__(self, binding: Any, name: str = "python", version: str = "", settle_deadline_s: float = DEFAULT_SETTLE_DEADLINE_S) -> None:
        self.binding = binding
        self.name = name
        self.version = version
        self.settle_deadline_s = settle_deadline_s
        self._refusals = Refusals()

    def perform(self, operation: str, input: JsonObject, steps: list[JsonObject] | None = None) -> JsonObject:
        """The operation's observation; an input ``to_impl`` refused meanwhile skips it, even one the port caught."""
        return self._refusals.guard(lambda: super(BindingAdapter, self).perform(operation, input, steps))

    # -- helpers -------------------------------------------------------------------------

    def _api(self, name: str) -> Callable[..., Any]:
        function = getattr(self.binding, name, None)
        if not callable(function):
            raise OperationNotSupported(f"{self.name} has no {name}")
        return function  # type: ignore[no-any-return]

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._call_function(self._api(name), name, *args, **kwargs)

    def _call_method(self, target: Any, owner: str, name: str, *args: Any) -> Any:
        """Call ``target.name(*args)``, a method of an object the port returned (``owner`` names it in messages)."""
        method = getattr(target, name, None)
        if not callable(method):
            raise OperationNotSupported(f"{self.name}: {owner} has no {name}")
        return self._call_function(method, f"{owner}.{name}", *args)

    @staticmethod
    def _call_function(function: Callable[..., Any], name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the port: ``NotImplementedError`` skips the case, any other exception fails it (:func:`.port_calls.call_port`)."""
        return call_port(function, name, *args, **kwargs)

    # -- hooks: the port's own objects ---------------------------------------------------------

    def to_impl(self, value: JsonValue) -> Any:
        """The port's own object for a JSON input value: the binding's ``to_impl`` of a private copy.

        A list is converted item by item (a list of messages, turns or blocks). Without the
        hook, the copy itself (plain dicts). Subclasses may override this.
        """
        copied = copy.deepcopy(value)
        hook = getattr(self.binding, "to_impl", None)
        if not callable(hook):
            return copied
        try:
            if isinstance(copied, list):
                return [hook(item) for item in copied]
            return hook(copied)
        except NotImplementedError as error:  # the port's types cannot hold this input: not a case for it
            raise self._refusals.refuse(f"the binding's to_impl() cannot hold this input: {error}") from error
        except Exception as error:
            raise HarnessError(f"the binding's to_impl() threw {describe_exception(error)}") from error

    def to_json(self, value: Any, what: str) -> JsonValue:
        """A detached JSON copy of what the port produced: the binding's ``to_json`` (item by item for a list), checked."""
        hook = getattr(self.binding, "to_json", None)
        if callable(hook):
            try:
                value = [hook(item) for item in value] if isinstance(value, list | tuple) else hook(value)
            except Exception as error:
                raise ImplementationThrew(f"to_json() of {what} threw {describe_exception(error)}") from error
        return to_json(value, what)

    def _fingerprint(self, value: Any) -> str:
        """What a port's object looks like now (through ``to_json``), to tell whether it changed."""
        try:
            return fingerprint(self.to_json(value, "an input"))
        except ImplementationThrew as error:
            return f"<not serializable: {error}>"

    def _field(self, event: Any, name: str) -> Any:
        """An event's field: a dict's key or an object's attribute of the IR's name."""
        if isinstance(event, dict):
            return event.get(name)
        return getattr(event, name, None)

    def _event_type(self, event: Any) -> Any:
        """An event's ``type``: a dict's key, else that of its JSON form."""
        if isinstance(event, dict):
            return event.get("type")
        try:
            serialized = self.to_json(event, "an event")
        except ImplementationThrew:
            return None
        return serialized.get("type") if isinstance(serialized, dict) else None

    def _pure(self, name: str, argument: Any) -> tuple[JsonValue, bool]:
        argument = self.to_impl(argument)
        before = self._fingerprint(argument)
        value = self.to_json(self._call(name, argument), f"the value {name}() returned")
        return value, self._fingerprint(argument) == before

    # -- pure operations -----------------------------------------------------------------

    def text_of(self, input: JsonObject) -> JsonObject:
        value, unchanged = self._pure("text_of", input["message"])
        return {"value": value, "input_unchanged": unchanged}

    def system_message_text(self, input: JsonObject) -> JsonObject:
        value, unchanged = self._pure("system_message_text", input["message"])
        return {"value": value, "input_unchanged": unchanged}

    def current_system_message(self, input: JsonObject) -> JsonObject:
        value, unchanged = self._pure("current_system_message", input["messages"])
        sections = value.get("sections") if isinstance(value, dict) else None
        order: JsonValue = list(sections) if isinstance(sections, dict) else None
        return {"value": value, "section_order": order, "input_unchanged": unchanged}

    def current_system_prompt(self, input: JsonObject) -> JsonObject:
        value, unchanged = self._pure("current_system_prompt", input["messages"])
        return {"value": value, "input_unchanged": unchanged}

    def make_text(self, input: JsonObject) -> JsonObject:
        return {"value": self.to_json(self._call("text", input["value"]), "text()")}

    def make_user_message(self, input: JsonObject) -> JsonObject:
        return {"value": self.to_json(self._call("user_message", input["value"]), "user_message()")}

    def make_assistant_message(self, input: JsonObject) -> JsonObject:
        args: list[Any] = [self.to_impl(input["content"])]
        if "stop_reason" in input or "overrides" in input:
            args.append(input.get("stop_reason", "stop"))
        if "overrides" in input:
            args.append(copy.deepcopy(input["overrides"]))
        return {"value": self.to_json(self._call("assistant_message", *args), "assistant_message()")}

    # -- scenarios -----------------------------------------------------------------------

    def event_stream(self, input: JsonObject, steps: list[JsonObject]) -> JsonObject:
        return {"steps": run_coroutine(self._play_event_stream(input, steps))}

    def scripted_model(self, input: JsonObject, steps: list[JsonObject]) -> JsonObject:
        return {"steps": run_coroutine(self._play_scripted_model(input, steps))}

    async def _play_event_stream(self, input: JsonObject, steps: list[JsonObject]) -> list[JsonValue]:
        state = self._new_event_stream(input)
        observations: list[JsonValue] = []
        for step in steps:
            observations.append(await self._event_stream_step(state, step))
        return observations

    def _new_event_stream(self, input: JsonObject) -> _EventStreamState:
        """The stream the input asks for, and how to tell its terminal events' payload field."""
        if input["kind"] == "assistant":
            terminals = {"done": "message", "error": "error"}
            return _EventStreamState(self._call("AssistantMessageEventStream"), lambda event: terminals.get(str(event.get("type"))))
        terminal_types = list(input["terminal_types"])  # type: ignore[arg-type]
        result_field = str(input["result_field"])
        stream = self._call(
            "EventStream",
            lambda event: self._field(event, "type") in terminal_types,
            lambda event: self._field(event, result_field),
        )
        return _EventStreamState(stream, lambda event: result_field if event.get("type") in terminal_types else None)

    async def _event_stream_step(self, state: _EventStreamState, step: JsonObject) -> JsonObject:
        action = step["action"]
        if action == "push":
            return {"threw": self._push(state, step["event"])}
        if action == "end":
            return {"threw": self._end(state, step)}
        if action == "start_consumer":
            await self._observe.start_consumer(state.stream, state.consumer)
            return {}
        if action == "consume":
            return await self._observe.finish_consumer(state.stream, state.consumer)
        if action == "result":
            return await self._observe.result(state.stream, {"terminal_event": state.terminal_payload, "end_argument": state.end_argument})
        if action == "next":
            return await self._observe.next(state.stream, state.iterator)
        raise HarnessError(f"unknown event_stream action {action!r}")

    def _push(self, state: _EventStreamState, raw_event: JsonValue) -> str | None:
        """Push one event; the first terminal event's payload is remembered, for ``same_object_as``."""
        event = self.to_impl(raw_event)
        if state.terminal_payload is _NO_TERMINAL and isinstance(raw_event, dict):
            name = state.terminal_field(raw_event)
            if name is not None:
                state.terminal_payload = self._field(event, name)
        return _threw(state.stream.push, event)

    def _end(self, state: _EventStreamState, step: JsonObject) -> str | None:
        """End the stream, with the step's result when it has one (remembered, for ``same_object_as``)."""
        if "result" not in step:
            return _threw(state.stream.end)
        state.end_argument = self.to_impl(step["result"])
        return _threw(state.stream.end, state.end_argument)

    async def _play_scripted_model(self, input: JsonObject, steps: list[JsonObject]) -> list[JsonValue]:
        turns = self.to_impl(input["turns"])
        state = _ScriptedModelState(self._call("ScriptedModel", turns), turns, self._fingerprint(turns))
        observations: list[JsonValue] = []
        for step in steps:
            observations.append(await self._scripted_model_step(state, step))
        return observations

    async def _scripted_model_step(self, state: _ScriptedModelState, step: JsonObject) -> JsonObject:
        action = step["action"]
        if action == "stream":
            return self._stream_call(state, step)
        if action in _CALL_ACTIONS:
            call = state.calls.get(str(step.get("call")))
            if call is None:
                raise HarnessError(f"step uses call {step.get('call')!r} before any stream step created it")
            return await self._call_action(str(action), call, step)
        if action == "settle":
            await settle()
            return {}
        if action == "requests":
            return {"requests": self.to_json(list(state.model.requests), "model.requests")}
        if action == "check_turns":
            return {"turns_unchanged": self._fingerprint(state.turns) == state.turns_before}
        raise HarnessError(f"unknown scripted_model action {action!r}")

    def _stream_call(self, state: _ScriptedModelState, step: JsonObject) -> JsonObject:
        """A ``stream`` step: a new call of the model, named by the step, with the signal it asks for."""
        call = Call(self.to_impl(step["context"]))
        state.calls[str(step["call"])] = call
        self._give_controller(call, step.get("signal", "none"))
        try:
            if call.controller is None:
                call.stream = state.model.stream(call.context)
            else:
                call.stream = state.model.stream(call.context, signal=call.controller.signal)
        except NotImplementedError as error:
            raise not_supported("ScriptedModel.stream", error) from error
        except Exception as error:
            return {"threw": describe_exception(error)}
        return {"threw": None}

    async def _call_action(self, action: str, call: Call, step: JsonObject) -> JsonObject:
        """A step on one call that a stream step created."""
        if action == "mutate_context":
            mutate_context(call.context, step, self.to_impl)
            return {}
        if action == "abort":
            abort_call(call, step)
            return {}
        if action == "mutate_result":
            return await self._mutate_result(call, step)
        if action == "context":
            return {"context": self.to_json(call.context, "the caller's context")}
        return await self._call_step(action, call)

    @property
    def _observe(self) -> StreamObserver:
        return StreamObserver(self.to_json, self.settle_deadline_s)

    def _give_controller(self, call: Call, signal_mode: JsonValue) -> None:
        """Give the call an ``AbortController`` when the step's ``signal`` is ``controller`` or ``aborted`` (then aborted)."""
        if signal_mode != "none":
            call.controller = self._call("AbortController")
            if signal_mode == "aborted":
                call.controller.abort()

    async def _call_step(self, action: str, call: Call) -> JsonObject:
        if call.stream is None:
            return {"threw": "there is no stream: stream() threw"}
        if action == "start_consumer":
            await self._observe.start_consumer(call.stream, call.consumer)
            return {}
        if action == "consume":
            return await self._observe.finish_consumer(call.stream, call.consumer)
        terminal, kind = next(
            ((event, kind) for event in reversed(call.consumer.received) if (kind := self._event_type(event)) in {"done", "error"}),
            (None, None),
        )
        payload = _NO_TERMINAL if terminal is None else self._field(terminal, "message" if kind == "done" else "error")
        return await self._observe.result(call.stream, {"terminal_event": payload})

    async def _mutate_result(self, call: Call, step: JsonObject) -> JsonObject:
        """Wait for the call's result, then change it in place as the step says."""
        if call.stream is None:
            return {"applied": False, "error": "there is no stream: stream() threw"}
        try:
            future = asyncio.ensure_future(call.stream.result())
        except Exception as error:
            return {"applied": False, "error": f"result() threw {describe_exception(error)}"}
        if not await wait_settled(future, self.settle_deadline_s):
            # Not cancelled: it may be the port's own future, which a later result() must still find.
            return {"applied": False, "error": "result() is still pending"}
        if future.exception() is not None:
            return {"applied": False, "error": f"result() rejected: {describe_exception(future.exception())}"}
        try:
            apply_change(future.result(), step, self.to_impl)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError) as error:
            return {"applied": False, "error": f"the result has no {change_path(step)}: {error}"}
        return {"applied": True}


def abort_call(call: Call, step: JsonObject) -> None:
    """An ``abort`` step: abort the call's controller."""
    if call.controller is None:
        raise HarnessError(f"call {step['call']!r} has no abort controller (use signal: controller)")
    call.controller.abort()


def _threw(action: Callable[..., object], *args: Any) -> str | None:
    """Call ``action``; the description of what it raised, or None."""
    try:
        action(*args)
    except Exception as error:
        return describe_exception(error)
    return None
