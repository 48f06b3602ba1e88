"""What a ``run_agent`` case scripts besides chapter 07's tools and executor: the model and the subscribers.

All of it is the adapter's own, never student code (spec/fixture-format.md, "The stateful agent"):

- :class:`AgentModel` plays the case's turns with the reference ``ScriptedModel`` (chapter 04),
  one turn per ``stream()`` call; a turn ``{gate: T, message}`` is held until a step
  ``{complete: T}`` (the course's ``ManualModel``), and answers an abort at once unless it says
  ``honor_abort: false``; a held turn ``{gate: T, reject: MESSAGE}`` ignores abort and, once
  completed, fails: iterating its stream and its ``result()`` raise that error (a provider that
  fails mid-request); a turn ``{throw: MESSAGE}`` makes ``stream()`` raise; a turn with
  ``changed_later: true`` rewrites the texts of the message it answered with at the next
  request and when the scenario ends. It records every
  request and, per request, whether its signal is the previous request's.
- :class:`Aborts` is how the adapter aborts the Agent (steps, subscribers, tools' ``abort``
  actions), telling held turns to look at their signal again.
- :class:`Subscriber` is a scripted listener: it records each event it receives as a trace line
  and plays its actions on the events its rules name.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import reference_impl
from conformance.adapters.agent_state_binding import scribble_event
from conformance.adapters.interface import ImplementationThrew
from conformance.adapters.loop_scripts import World, scripted_error
from conformance.adapters.tool_binding import error_message
from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.model.traces import agent_line
from reference_impl.event_stream import AssistantMessageEventStream
from reference_impl.ir import assistant_message
from reference_impl.scripted_model import ABORTED_MESSAGE, finish, play, terminal_message

#: The text a ``changed_later`` turn writes into the message it answered with, once it is answered.
CHANGED_LATER = "changed by the model after it answered"


def _aborted(signal: Any) -> bool:
    return signal is not None and bool(getattr(signal, "aborted", False))


@dataclass
class Aborts:
    """The adapter's way to abort the Agent: ``abort()`` calls the Agent's and wakes every held turn."""

    agent: Any = None
    _waiters: list[asyncio.Event] = field(default_factory=list)

    def abort(self) -> None:
        """``agent.abort()``; the held turns then read their signal."""
        try:
            self.agent.abort()
        finally:
            for waiter in self._waiters:
                waiter.set()

    def waiter(self) -> asyncio.Event:
        """An event set at the next abort."""
        waiter = asyncio.Event()
        self._waiters.append(waiter)
        return waiter


class AgentModel:
    """The case's model: ``stream(context, {signal})`` plays the next turn, recording the request and its signal."""

    def __init__(self, turns: list[Any], world: World, aborts: Aborts) -> None:
        self._turns = turns
        self._world = world
        self._aborts = aborts
        self._held: list[asyncio.Future[None]] = []
        self._answers: list[asyncio.Future[Any]] = []
        self._last_signal: Any = None
        self.requests: list[JsonValue] = []
        self.signals: list[JsonObject] = []

    def stream(self, context: Any, options: Any = None) -> Any:
        """Record the request and its signal, then play the next turn (or raise for a ``throw`` turn)."""
        self.change_earlier_answers()
        try:
            self.requests.append(self._world.to_json(context, "a model request"))
        except ImplementationThrew as error:
            self.requests.append(f"<not a JSON value: {error}>")
        signal = options.get("signal") if isinstance(options, dict) else getattr(options, "signal", None)
        self._record_signal(signal)
        index = len(self.requests) - 1
        turn = self._turns[index] if index < len(self._turns) else {}
        if "throw" in turn:
            raise scripted_error(turn["throw"])
        if "reject" in turn:
            failure: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            failure.add_done_callback(lambda done: done.exception())  # a loop that only iterates never asks result()
            self._held.append(asyncio.ensure_future(self._fail(failure, turn)))
            return FailingStream(failure)
        if "gate" not in turn:
            # A played turn (or, past the script, the ScriptedModel's exhaustion error) at once.
            stream = reference_impl.ScriptedModel([turn["message"]] if "message" in turn else []).stream(context, signal)
        else:
            stream = AssistantMessageEventStream()
            self._held.append(asyncio.ensure_future(self._hold(stream, turn, signal)))
        if turn.get("changed_later") is True:
            self._answers.append(stream.result())
        return stream

    def change_earlier_answers(self) -> None:
        """What a ``changed_later`` turn does once answered: the message it resolved with gets new texts (AGENT-LOOP-4)."""
        for answer in self._answers:
            message = answer.result() if answer.done() and answer.exception() is None else None
            for block in message.get("content", []) if isinstance(message, dict) else []:
                if isinstance(block, dict) and block.get("type") == "text":
                    block["text"] = CHANGED_LATER

    def _record_signal(self, signal: Any) -> None:
        identity = "absent" if signal is None else "first" if not self.signals else "same" if signal is self._last_signal else "new"
        self.signals.append({"identity": identity, "aborted": _aborted(signal)})
        self._last_signal = signal
        self._world.signal = signal  # a tool's signal is "same" when it is this request's (AGENT-ABORT-3)

    async def _fail(self, failure: asyncio.Future[Any], turn: JsonObject) -> None:
        """Wait for the turn's gate, whatever the signal, then fail its stream with the scripted error."""
        await self._world.gate(f"turn:{turn['gate']}").wait()
        failure.set_exception(scripted_error(turn["reject"]))

    async def _hold(self, stream: AssistantMessageEventStream, turn: JsonObject, signal: Any) -> None:
        """Wait for the turn's gate (or, when it honours abort, the signal), then play it."""
        honor = turn.get("honor_abort", True) is not False
        gate = self._world.gate(f"turn:{turn['gate']}")
        while not gate.is_set() and not (honor and _aborted(signal)):
            woken = asyncio.ensure_future(self._aborts.waiter().wait())
            opened = asyncio.ensure_future(gate.wait())
            try:
                await asyncio.wait({woken, opened}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in (woken, opened):
                    waiting.cancel()
        if honor and _aborted(signal):
            finish(stream, assistant_message([], "aborted", {"errorMessage": ABORTED_MESSAGE}))
        else:
            play(stream, terminal_message(turn["message"]))  # type: ignore[arg-type]


class FailingStream:
    """A ``reject`` turn's stream: no events, and once its gate opens both iteration and ``result()`` raise."""

    def __init__(self, failure: asyncio.Future[Any]) -> None:
        self._failure = failure

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._events()

    async def _events(self) -> AsyncIterator[Any]:
        await asyncio.shield(self._failure)
        return
        yield  # an async generator that yields nothing: it raises the turn's error when it fails

    def result(self) -> asyncio.Future[Any]:
        """The failure, as a future that raises once the turn is completed."""
        return asyncio.shield(self._failure)


def matches(rule: JsonObject, event: JsonValue) -> bool:
    """Whether an Agent event (as JSON) is the one a subscriber's ``when`` names."""
    if not isinstance(event, dict) or event.get("type") != rule.get("type"):
        return False
    if "runId" in rule and event.get("runId") != rule["runId"]:
        return False
    inner = event.get("event")
    return "loop" not in rule or (isinstance(inner, dict) and inner.get("type") == rule["loop"])


class Subscriber:
    """A scripted listener: each event it gets is a trace line; its rules play actions on the events they name."""

    def __init__(self, spec: JsonObject, act: Callable[[Subscriber, str, JsonValue, Any], JsonObject | None]) -> None:
        self.name = str(spec["name"])
        self.rules: list[Any] = list(spec.get("rules") or [])  # type: ignore[arg-type]
        self.at_start = spec.get("subscribed", True) is not False
        self.unsubscribe: Callable[[], Any] | None = None
        self.lines: list[JsonValue] = []
        self._act = act

    def listen(self, to_json: Callable[[Any, str], JsonValue]) -> Callable[[Any], None]:
        """The listener to subscribe."""

        def listener(event: Any) -> None:
            seen = to_json(event, "an event a subscriber received")
            line = agent_line(seen)
            self.lines.append(line)
            for rule in self.rules:
                if matches(rule.get("when") or {}, seen):
                    for action in rule.get("do") or []:
                        self._act(self, line, action, event)

        return listener


def scribble(event: Any) -> None:
    """What a careless subscriber does to the event it got: every message text changed, a message appended."""
    with contextlib.suppress(Exception):  # a port's own objects may refuse: then nothing changed
        scribble_event(event)


def outcome(call: Callable[[], Any]) -> tuple[Any, str | None]:
    """``call()``'s value and None, or None and the message of what it raised."""
    try:
        return call(), None
    except Exception as error:
        return None, error_message(error)
