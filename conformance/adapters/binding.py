"""An adapter for implementations written in Python, reached in-process through a *binding*.

A binding is any object (usually a module) exposing the chapter API under Python names:
``text_of``, ``system_message_text``, ``current_system_message``, ``current_system_prompt``,
``text``, ``user_message``, ``assistant_message``, ``EventStream``,
``AssistantMessageEventStream``, ``ScriptedModel`` and ``AbortController``, with IR values
as plain dicts that use the IR's own field names, or as the port's own objects when the
binding also has the two hooks ``to_impl(json)`` (a JSON input value to the port's object) and
``to_json(obj)`` (the port's object to its JSON form). :class:`BindingAdapter` turns that API
into observations, playing scenarios on a fresh asyncio event loop. Mutation checks compare
the port's own objects (through ``to_json``) before and after a call, and identity
(``same_object_as``) is decided on the port's objects. The whole contract: docs/porting.md.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters import json_pointer
from conformance.adapters.interface import DEFAULT_SETTLE_DEADLINE_S, Adapter, HarnessError, ImplementationThrew, OperationNotSupported
from conformance.common.jsontypes import JsonObject, JsonValue

_SETTLE_TICKS = 20
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


def describe_exception(error: BaseException) -> str:
    """``Type: message`` of an exception raised by the implementation."""
    return f"{type(error).__name__}: {error}"


@dataclass
class _Consumer:
    """One async consumer of a stream and what it has received so far."""

    received: list[Any] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    #: Called with the count of events received so far, after each one (faux_provider's ``abort_after``).
    on_event: Callable[[int], None] | None = None


@dataclass
class _Call:
    """What a scripted_model scenario knows about one ``stream()`` call."""

    context: Any
    controller: Any = None
    stream: Any = None
    consumer: _Consumer = field(default_factory=_Consumer)


class BindingAdapter(Adapter):
    """Adapter for a Python implementation exposing the chapter API through a binding."""

    def __init__(self, binding: Any, name: str = "python", version: str = "", settle_deadline_s: float = DEFAULT_SETTLE_DEADLINE_S) -> None:
        self.binding = binding
        self.name = name
        self.version = version
        self.settle_deadline_s = settle_deadline_s

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
        """Call the port: ``NotImplementedError`` skips the case, any other exception fails it."""
        try:
            return function(*args, **kwargs)
        except NotImplementedError as error:
            raise OperationNotSupported(f"{name} is not implemented: {error}") from error
        except Exception as error:
            raise ImplementationThrew(f"{name}() threw {describe_exception(error)}") from error

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

    async def _play_event_stream(self, input: JsonObject, steps: list[JsonObject]) -> list[JsonValue]:  # noqa: C901  # TODO(issue 25): split
        if input["kind"] == "assistant":
            stream = self._call("AssistantMessageEventStream")
            terminal_field: Callable[[Any], str | None] = lambda event: {"done": "message", "error": "error"}.get(event.get("type"))  # noqa: E731
        else:
            terminal_types = list(input["terminal_types"])  # type: ignore[arg-type]
            result_field = str(input["result_field"])
            stream = self._call(
                "EventStream",
                lambda event: self._field(event, "type") in terminal_types,
                lambda event: self._field(event, result_field),
            )
            terminal_field = lambda event: result_field if event.get("type") in terminal_types else None  # noqa: E731
        terminal_payload: Any = _NO_TERMINAL
        end_argument: Any = _NO_TERMINAL
        consumer = _Consumer()
        iterator: list[Any] = []  # the hand-driven iterator, once a `next` step created it
        observations: list[JsonValue] = []
        for step in steps:
            action = step["action"]
            observation: JsonObject = {}
            if action == "push":
                event = self.to_impl(step["event"])
                if terminal_payload is _NO_TERMINAL and isinstance(step["event"], dict):
                    name = terminal_field(step["event"])
                    if name is not None:
                        terminal_payload = self._field(event, name)
                observation["threw"] = _threw(stream.push, event)
            elif action == "end":
                if "result" in step:
                    end_argument = self.to_impl(step["result"])
                    observation["threw"] = _threw(stream.end, end_argument)
                else:
                    observation["threw"] = _threw(stream.end)
            elif action == "start_consumer":
                await self._start_consumer(stream, consumer)
            elif action == "consume":
                observation = await self._finish_consumer(stream, consumer)
            elif action == "result":
                observation = await self._result(stream, {"terminal_event": terminal_payload, "end_argument": end_argument})
            elif action == "next":
                observation = await self._next(stream, iterator)
            else:
                raise HarnessError(f"unknown event_stream action {action!r}")
            observations.append(observation)
        return observations

    async def _play_scripted_model(self, input: JsonObject, steps: list[JsonObject]) -> list[JsonValue]:  # noqa: C901  # TODO(issue 25): split
        turns = self.to_impl(input["turns"])
        turns_before = self._fingerprint(turns)
        model = self._call("ScriptedModel", turns)
        calls: dict[str, _Call] = {}
        observations: list[JsonValue] = []
        for step in steps:
            action = step["action"]
            observation: JsonObject = {}
            call = calls.get(str(step.get("call")))
            if action == "stream":
                call = _Call(self.to_impl(step["context"]))
                calls[str(step["call"])] = call
                self._give_controller(call, step.get("signal", "none"))
                try:
                    if call.controller is None:
                        call.stream = model.stream(call.context)
                    else:
                        call.stream = model.stream(call.context, signal=call.controller.signal)
                    observation["threw"] = None
                except NotImplementedError as error:
                    raise OperationNotSupported(f"ScriptedModel.stream is not implemented: {error}") from error
                except Exception as error:
                    observation["threw"] = describe_exception(error)
            elif call is None and action in {"mutate_context", "abort", "start_consumer", "consume", "result", "mutate_result", "context"}:
                raise HarnessError(f"step uses call {step.get('call')!r} before any stream step created it")
            elif action == "mutate_context":
                assert call is not None
                _mutate(call.context, step, self.to_impl)
            elif action == "abort":
                assert call is not None
                _abort_call(call, step)
            elif action == "settle":
                await _settle()
            elif action in {"start_consumer", "consume", "result"}:
                assert call is not None
                observation = await self._call_step(action, call)
            elif action == "mutate_result":
                assert call is not None
                observation = await self._mutate_result(call, step)
            elif action == "context":
                assert call is not None
                observation["context"] = self.to_json(call.context, "the caller's context")
            elif action == "requests":
                observation["requests"] = self.to_json(list(model.requests), "model.requests")
            elif action == "check_turns":
                observation["turns_unchanged"] = self._fingerprint(turns) == turns_before
            else:
                raise HarnessError(f"unknown scripted_model action {action!r}")
            observations.append(observation)
        return observations

    def _give_controller(self, call: _Call, signal_mode: JsonValue) -> None:
        """Give the call an ``AbortController`` when the step's ``signal`` is ``controller`` or ``aborted`` (then aborted)."""
        if signal_mode != "none":
            call.controller = self._call("AbortController")
            if signal_mode == "aborted":
                call.controller.abort()

    async def _call_step(self, action: str, call: _Call) -> JsonObject:
        if call.stream is None:
            return {"threw": "there is no stream: stream() threw"}
        if action == "start_consumer":
            await self._start_consumer(call.stream, call.consumer)
            return {}
        if action == "consume":
            return await self._finish_consumer(call.stream, call.consumer)
        terminal, kind = next(
            ((event, kind) for event in reversed(call.consumer.received) if (kind := self._event_type(event)) in {"done", "error"}),
            (None, None),
        )
        payload = _NO_TERMINAL if terminal is None else self._field(terminal, "message" if kind == "done" else "error")
        return await self._result(call.stream, {"terminal_event": payload})

    async def _next(self, stream: Any, iterator: list[Any]) -> JsonObject:
        """One hand-driven step of the stream's async iterator (``__anext__``)."""
        try:
            if not iterator:
                iterator.append(stream.__aiter__())
            future = asyncio.ensure_future(iterator[0].__anext__())
        except Exception as error:
            return {"state": "rejected", "error": f"next() threw {describe_exception(error)}"}
        if not await wait_settled(future, self.settle_deadline_s):
            return {"state": "pending"}
        failure = future.exception()
        if isinstance(failure, StopAsyncIteration):
            return {"state": "resolved", "done": True, "value": None}
        if failure is not None:
            return {"state": "rejected", "error": describe_exception(failure)}
        return {"state": "resolved", "done": False, "value": self.to_json(future.result(), "the event next() gave")}

    async def _mutate_result(self, call: _Call, step: JsonObject) -> JsonObject:
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
            _change(future.result(), step, self.to_impl)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError) as error:
            return {"applied": False, "error": f"the result has no {_change_path(step)}: {error}"}
        return {"applied": True}

    async def _start_consumer(self, stream: Any, consumer: _Consumer) -> None:
        async def consume() -> None:
            async for event in stream:
                consumer.received.append(event)
                if consumer.on_event is not None:
                    consumer.on_event(len(consumer.received))

        if consumer.task is None:
            consumer.task = asyncio.ensure_future(consume())
            await _settle()

    async def _finish_consumer(self, stream: Any, consumer: _Consumer) -> JsonObject:
        try:
            if consumer.task is None:
                await self._start_consumer(stream, consumer)
            assert consumer.task is not None
            await wait_settled(consumer.task, self.settle_deadline_s)
        except Exception as error:
            return {"events": self.to_json(consumer.received, "the events"), "finished": False, "threw": describe_exception(error)}
        # Serialized now, after the stream finished (spec/spec.md section 8): a partial shared
        # between events and changed by later ones shows in every event that holds it.
        observation: JsonObject = {"events": self.to_json(consumer.received, "the events"), "finished": consumer.task.done()}
        if consumer.task.done() and consumer.task.exception() is not None:
            observation["finished"] = False
            observation["threw"] = f"iteration threw {describe_exception(consumer.task.exception())}"  # type: ignore[arg-type]
        return observation

    async def _result(self, stream: Any, identities: dict[str, Any]) -> JsonObject:
        try:
            future = asyncio.ensure_future(stream.result())
        except Exception as error:
            return {"state": "rejected", "error": f"result() threw {describe_exception(error)}", "same_object_as": None}
        if not await wait_settled(future, self.settle_deadline_s):
            # Not cancelled: it may be the port's own future, which a later result() must still find.
            return {"state": "pending", "same_object_as": None}
        failure = future.exception()
        if failure is not None:
            return {"state": "rejected", "error": describe_exception(failure), "same_object_as": None}
        value = future.result()
        same = next((name for name, candidate in identities.items() if candidate is value), None)
        return {"state": "resolved", "value": self.to_json(value, "the result"), "same_object_as": same}


def _abort_call(call: _Call, step: JsonObject) -> None:
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


def _mutate(context: Any, step: JsonObject, convert: Callable[[JsonValue], Any]) -> None:
    try:
        _change(context, step, convert)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as error:
        raise HarnessError(f"mutate_context cannot apply {step}: {error}") from error


def _change(target: Any, step: JsonObject, convert: Callable[[JsonValue], Any]) -> None:
    """Apply a step's ``append`` or ``set`` (``{path, value}``) to ``target`` in place; ``convert`` makes the port's value."""
    if "append" in step:
        change = step["append"]
        assert isinstance(change, dict)
        json_pointer.append_value(target, str(change["path"]), convert(change["value"]))
    else:
        change = step["set"]
        assert isinstance(change, dict)
        json_pointer.set_value(target, str(change["path"]), convert(change["value"]))


def _change_path(step: JsonObject) -> str:
    change = step.get("append", step.get("set"))
    return str(change.get("path")) if isinstance(change, dict) else "path"


_IDLE_TURNS = 3


async def wait_settled(future: asyncio.Future[Any], deadline_s: float) -> bool:
    """Wait until ``future`` is done, the event loop is idle, or ``deadline_s`` passes; True when done.

    Idle means several loop turns in a row found no ready callback, no live timer and no
    watched file descriptor besides the loop's own: then nothing can complete ``future``
    any more (spec/protocol.md, "Settling"), and waiting out the deadline would only cost
    time. Where idleness cannot be observed (a loop without these internals), the deadline
    decides.
    """
    loop = asyncio.get_running_loop()
    ends = loop.time() + deadline_s
    quiet = 0
    while not future.done():
        if loop.time() >= ends:
            return False
        quiet = quiet + 1 if _loop_is_idle(loop) else 0
        if quiet >= _IDLE_TURNS:
            return False
        if quiet == 0 and getattr(loop, "_scheduled", None):
            # A timer is live: sleep until the earliest of it and the deadline rather than spin.
            await asyncio.wait({future}, timeout=max(0.0, min(ends, _next_timer(loop)) - loop.time()))
        else:
            await asyncio.sleep(0)
    return True


def _loop_is_idle(loop: asyncio.AbstractEventLoop) -> bool:
    ready, scheduled, selector = getattr(loop, "_ready", None), getattr(loop, "_scheduled", None), getattr(loop, "_selector", None)
    if ready is None or scheduled is None or selector is None:
        return False
    # Our own wake-up is the only ready callback right after sleep(0) resumed us.
    live_timers = [handle for handle in scheduled if not handle.cancelled()]
    return len(ready) == 0 and not live_timers and len(selector.get_map()) <= 1


def _next_timer(loop: asyncio.AbstractEventLoop) -> float:
    scheduled = [handle.when() for handle in getattr(loop, "_scheduled", ()) if not handle.cancelled()]
    return min(scheduled, default=loop.time())


async def _settle() -> None:
    """Let deferred callbacks (call_soon chains, woken consumers) run."""
    for _ in range(_SETTLE_TICKS):
        await asyncio.sleep(0)


_thread_loops = threading.local()


def run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run``, on one event loop per thread reused from case to case.

    After each run the tasks the implementation left behind are cancelled; a loop that still
    holds anything (a live timer, a pending callback, an unfinished async generator) is
    closed, as ``asyncio.run`` would, and the next run starts on a fresh one, so nothing of
    one case can reach the next (nor the next case's idle settling).
    """
    loop: asyncio.AbstractEventLoop | None = getattr(_thread_loops, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _thread_loops.loop = loop
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(coroutine)
    finally:
        leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in leftovers:
            task.cancel()
        if leftovers:
            loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
        if not _loop_is_clean(loop):
            _thread_loops.loop = None
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                asyncio.set_event_loop(None)
                loop.close()


def _loop_is_clean(loop: asyncio.AbstractEventLoop) -> bool:
    ready, scheduled, asyncgens = getattr(loop, "_ready", None), getattr(loop, "_scheduled", None), getattr(loop, "_asyncgens", None)
    if ready is None or scheduled is None or asyncgens is None:
        return False
    return not ready and not any(not handle.cancelled() for handle in scheduled) and not asyncgens
