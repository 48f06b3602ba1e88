"""The chapter 05 operations of the in-process binding: the wire conversion, the model over a transport, the SSE transport.

A binding for chapter 05 exposes, besides the chapter 03/04 names (:mod:`.binding`):

====================================================================== ==========================================
binding name                                                           course
====================================================================== ==========================================
``to_provider_messages(context)``, ``to_provider_tools(tools)``       ``toProviderMessages``, ``toProviderTools`` (None for undefined)
``create_openai_compatible_model(provider=, model=, transport=)``     ``createOpenAICompatibleModel``: ``.stream(context, signal=None)``
``fixed_transport(chunks)``                                           ``fixedTransport``
``create_openai_compatible_transport(base_url=, api_key=, fetch=)``   ``createOpenAICompatibleTransport``: ``.stream(request, signal)``
``AbortError`` (optional)                                             the class of the abort errors the adapter's bodies raise
====================================================================== ==========================================

A transport's ``stream(request, signal)`` returns an async iterator of chunks (dicts with the
course's names). ``fetch(url, init)`` is awaited; ``init`` is ``{method, headers, body,
signal}``; the response has ``status``, ``ok`` and ``body`` (an async iterator of bytes). The
transports and fetches here are the adapter's own scripted ones (:mod:`.provider_scripts`),
never student code.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.event_loop import run_coroutine
from conformance.adapters.interface import HarnessError, ImplementationThrew, OperationNotSupported
from conformance.adapters.port_calls import not_supported
from conformance.adapters.provider_scripts import PausingConsumer, ScriptedFetch, ScriptedTransport, fetch_record, identity
from conformance.adapters.stream_observer import StreamObserver
from conformance.adapters.tool_binding import ToolContractOperations, error_message
from conformance.common.jsontypes import JsonObject, JsonValue


@dataclass
class _Run:
    """What a chapter 05 scenario keeps from step to step."""

    input: JsonObject
    #: Set by an ``abort`` step, after the controller aborted: wakes the scripts that wait for it.
    aborted: asyncio.Event = field(default_factory=asyncio.Event)
    controller: Any = None
    stream: Any = None
    consumer: PausingConsumer | None = None
    transport: Any = None
    recorder: Any = None


class ProviderAdapterOperations(ToolContractOperations):
    """The chapter 05 operations (over chapter 06's); :class:`~conformance.adapters.binding.BindingAdapter` supplies the helpers."""

    def _event_type(self, event: Any) -> Any:
        raise NotImplementedError  # supplied by BindingAdapter

    def _field(self, event: Any, name: str) -> Any:
        raise NotImplementedError  # supplied by BindingAdapter

    # -- lab 5.1: the wire conversion ---------------------------------------------------------

    def _convert(self, name: str, argument: Any) -> JsonObject:
        before = self._fingerprint(argument)
        function = self._api(name)  # a binding without it skips the case ("not implemented"); it did not throw
        try:
            value = function(argument)
        except NotImplementedError as error:
            raise not_supported(name, error) from error
        except Exception as error:
            raise ImplementationThrew(f"{name}() threw {error_message(error)}") from error
        return {"value": self.to_json(value, f"the value {name}() returned"), "input_unchanged": self._fingerprint(argument) == before}

    def to_provider_messages(self, input: JsonObject) -> JsonObject:
        """``toProviderMessages(context)`` and whether the context stayed as it was."""
        return self._convert("to_provider_messages", self.to_impl(input["context"]))

    def to_provider_tools(self, input: JsonObject) -> JsonObject:
        """``toProviderTools(tools)``; without ``tools`` in the input, called with None (undefined)."""
        return self._convert("to_provider_tools", copy.deepcopy(input["tools"]) if "tools" in input else None)

    # -- lab 5.2: the model over a transport ---------------------------------------------------

    def provider_model_stream(self, input: JsonObject, steps: list[JsonObject]) -> JsonObject:
        """A ``createOpenAICompatibleModel`` over ``fixedTransport(chunks)`` or the adapter's scripted transport."""
        return {"steps": run_coroutine(self._play(input, steps, self._model_stream))}

    def _model_stream(self, run: _Run, step: JsonObject) -> None:
        spec: JsonObject = run.input["transport"]  # type: ignore[assignment]
        if "chunks" in spec:
            transport = self._api("fixed_transport")(copy.deepcopy(spec["chunks"]))
        else:
            transport = run.recorder = ScriptedTransport(spec["script"], run.aborted)  # type: ignore[arg-type]
        model = self._api("create_openai_compatible_model")(provider=run.input["provider"], model=run.input["model"], transport=transport)
        context = self.to_impl(step["context"])
        run.stream = model.stream(context) if run.controller is None else model.stream(context, signal=run.controller.signal)
        run.consumer = PausingConsumer(run.stream, self._event_type)

    # -- lab 5.3: the SSE transport ------------------------------------------------------------

    def provider_fetch_stream(self, input: JsonObject, steps: list[JsonObject]) -> JsonObject:
        """A ``createOpenAICompatibleTransport`` over the adapter's scripted fetch: its chunks, its error, its requests."""
        return {"steps": run_coroutine(self._play(input, steps, self._fetch_stream))}

    def _fetch_stream(self, run: _Run, step: JsonObject) -> None:
        abort_error = getattr(getattr(self, "binding", None), "AbortError", None)
        run.recorder = ScriptedFetch(run.input["fetch"], run.aborted, abort_error if isinstance(abort_error, type) else None)  # type: ignore[arg-type]
        create = self._api("create_openai_compatible_transport")
        run.transport = create(base_url=run.input["base_url"], api_key=run.input["api_key"], fetch=run.recorder)
        request = copy.deepcopy(step["request"])
        signal = None if run.controller is None else run.controller.signal
        run.stream = run.transport.stream(request, signal)
        run.consumer = PausingConsumer(run.stream, lambda chunk: self._field(chunk, "type"))

    # -- the steps both scenarios share -------------------------------------------------------

    async def _play(self, input: JsonObject, steps: list[JsonObject], start: Callable[[_Run, JsonObject], None]) -> list[JsonValue]:
        run = _Run(input)
        observations: list[JsonValue] = []
        for step in steps:
            observations.append(await self._step(run, step, start))
        return observations

    async def _step(self, run: _Run, step: JsonObject, start: Callable[[_Run, JsonObject], None]) -> JsonObject:
        action = step["action"]
        if action == "stream":
            return self._start(run, step, start)
        if action == "abort":
            if run.controller is None:
                raise HarnessError("abort needs a stream step with signal: controller")
            run.controller.abort()
            run.aborted.set()
            return {}
        if action == "requests":
            return self._requests(run)
        if run.consumer is None:
            return {"threw": "there is no stream: stream() threw"}
        if action == "consume":
            return await self._consume(run, run.consumer, step)
        if action == "result":
            return await self._result(run, run.consumer)
        raise HarnessError(f"unknown chapter 05 action {action!r}")

    def _start(self, run: _Run, step: JsonObject, start: Callable[[_Run, JsonObject], None]) -> JsonObject:
        if step.get("signal", "none") != "none":
            run.controller = self._api("AbortController")()
            if step["signal"] == "aborted":
                run.controller.abort()
                run.aborted.set()
        try:
            start(run, step)
        except NotImplementedError as error:
            raise not_supported("chapter 05", error) from error
        except (HarnessError, OperationNotSupported):
            raise
        except Exception as error:
            run.consumer = None
            return {"threw": error_message(error)}
        return {"threw": None}

    async def _consume(self, run: _Run, consumer: PausingConsumer, step: JsonObject) -> JsonObject:
        until = step.get("until")
        await consumer.advance(None if until is None else str(until), self.settle_deadline_s)
        received = self.to_json(list(consumer.received), "what the stream gave")
        failure = consumer.failure()
        if run.transport is not None:  # the SSE transport: its chunks, and the error it ended with
            return {
                "chunks": received,
                "finished": consumer.finished(),
                "error": None if failure is None else error_message(failure),
                "abort_error": failure is not None and type(failure).__name__ == "AbortError",
            }
        observation: JsonObject = {"events": received, "finished": consumer.finished() and failure is None}
        if failure is not None:
            observation["threw"] = f"iteration threw {error_message(failure)}"
        return observation

    async def _result(self, run: _Run, consumer: PausingConsumer) -> JsonObject:
        if run.transport is not None:
            raise HarnessError("a transport has no result(): use consume")
        terminal = next((event for event in reversed(consumer.received) if self._event_type(event) in {"done", "error"}), None)
        payload: Any = object()
        if terminal is not None:
            payload = self._field(terminal, "message" if self._event_type(terminal) == "done" else "error")
        return await StreamObserver(self.to_json, self.settle_deadline_s).result(run.stream, {"terminal_event": payload})

    def _requests(self, run: _Run) -> JsonObject:
        signal = None if run.controller is None else run.controller.signal
        if isinstance(run.recorder, ScriptedTransport):
            calls: list[JsonValue] = [
                {"request": self.to_json(request, "the request"), "signal": identity(given, signal)}
                for request, given in run.recorder.calls
            ]
            return {"requests": calls}
        if isinstance(run.recorder, ScriptedFetch):
            fetches: list[JsonValue] = [fetch_record(url, init, signal) for url, init in run.recorder.calls]
            return {"requests": fetches}
        raise HarnessError("requests needs a scripted transport (transport: {script}) or a fetch")
