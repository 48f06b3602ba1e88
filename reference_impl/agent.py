"""Chapter 09, Labs 9.2-9.5: the stateful ``Agent`` (spec/spec.md, "Stateful agent", 11.2-11.5).

An ``Agent`` keeps an ``AgentState`` across runs and plays chapter 09's loop
(:class:`~.agent_loop.QueueingLoopRun`) once per ``prompt``. Its state is only ever
derived by :func:`~.agent_state.reduce_agent_state`, each event reduced before any subscriber
sees it; whatever it hands out (events, snapshots, results) is a copy.

``Agent(options)`` takes a dict with the course's names: ``model``, ``tools`` (a
:class:`~.tool.ToolRegistry`), and optionally ``toolExecutor``, ``systemPrompt`` and
``maxSteps``. ``prompt(text, {"system": {"content"?, "sections"?}})`` returns a future.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .abort import AbortController
from .agent_loop import LoopRun, QueueingLoopRun, drive
from .agent_state import reduce_agent_state
from .ir import assistant_message, now_ms, user_message
from .projection import current_system_prompt

Listener = Callable[[dict[str, Any]], None]

BUSY = "Agent is busy"
STEERING_CLOSED = "steering 只在当前 run 尚未结束时有意义"
FOLLOW_UP_CLOSED = "follow-up 只在当前 run 尚未结束时排队"


@dataclass
class _ActiveRun:
    """One run's own controls: its id, its abort controller and its queues (AGENT-ABORT-1, AGENT-QUEUE-4)."""

    id: int
    controller: AbortController = field(default_factory=AbortController)
    steering: list[Any] = field(default_factory=list)
    follow_ups: list[Any] = field(default_factory=list)
    accepting_input: bool = True


def _drain(queue: list[Any]) -> list[Any]:
    taken = list(queue)
    queue.clear()
    return taken


class Agent:
    """A transcript, one run at a time, subscribers, and the user's controls (abort, steer, follow up)."""

    def __init__(self, options: dict[str, Any]) -> None:
        """A new idle Agent; a non-empty ``systemPrompt`` opens its transcript (AGENT-RUN-1)."""
        self._options = options
        prompt = options.get("systemPrompt")
        messages = [{"role": "system", "content": prompt, "timestamp": 0}] if prompt else []
        self._state: dict[str, Any] = {
            "status": "idle",
            "messages": messages,
            "streamingText": "",
            "pendingToolCallIds": [],
            "diagnostics": [],
        }
        self._listeners: dict[Listener, None] = {}  # an ordered set, as the course's Set
        self._pending_events: list[dict[str, Any]] = []
        self._dispatching = False
        self._active: _ActiveRun | None = None
        self._next_run_id = 1

    def get_state(self) -> dict[str, Any]:
        """A copy of the state (AGENT-COPY-1)."""
        return copy.deepcopy(self._state)

    @property
    def system_prompt(self) -> str | None:
        """The system messages of the transcript, replayed (AGENT-RUN-2)."""
        return current_system_prompt(self._state["messages"])

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Deliver every later event to ``listener``; the returned function stops that (AGENT-SUB-1)."""
        self._listeners[listener] = None

        def unsubscribe() -> None:
            self._listeners.pop(listener, None)

        return unsubscribe

    def _emit(self, event: dict[str, Any]) -> None:
        """Queue ``event``; the outermost call delivers the queue in order, each reduced first (AGENT-SUB-2, -4)."""
        self._pending_events.append(event)
        if self._dispatching:
            return
        self._dispatching = True
        try:
            while self._pending_events:
                self._deliver(self._pending_events.pop(0))
        finally:
            self._dispatching = False

    def _deliver(self, event: dict[str, Any]) -> None:
        """Reduce, then hand a copy to each listener subscribed now (AGENT-SUB-1, -2, AGENT-COPY-1)."""
        self._state = reduce_agent_state(self._state, event)
        for listener in list(self._listeners):
            self._notify(listener, copy.deepcopy(event))

    def _notify(self, listener: Listener, event: dict[str, Any]) -> None:
        try:
            listener(event)
        except Exception as error:  # one broken subscriber stops nothing (AGENT-SUB-3)
            self._state = {**self._state, "diagnostics": [*self._state["diagnostics"], f"subscriber: {error}"]}

    def steer(self, value: str) -> None:
        """Queue a steering message on the active run (AGENT-QUEUE-1)."""
        if self._active is None or not self._active.accepting_input:
            raise RuntimeError(STEERING_CLOSED)
        self._active.steering.append(user_message(value))

    def follow_up(self, value: str) -> None:
        """Queue a follow-up message on the active run (AGENT-QUEUE-1)."""
        if self._active is None or not self._active.accepting_input:
            raise RuntimeError(FOLLOW_UP_CLOSED)
        self._active.follow_ups.append(user_message(value))

    def abort(self) -> None:
        """Abort the active run's signal; nothing while idle (AGENT-ABORT-1)."""
        if self._active is not None:
            self._active.controller.abort()

    def prompt(self, value: str, options: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
        """One run: ``run_start``, the loop's events, ``run_end``; resolves with a copy of the result (AGENT-RUN-3).

        As the course's ``async prompt`` does within its call, the run starts (or is refused) now:
        the returned future resolves with the result, or is rejected while another run is active.
        """
        if self._active is not None:
            refused: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            refused.set_exception(RuntimeError(BUSY))  # a rejection, not a throw (AGENT-RUN-4)
            return refused
        system = _system_patch((options or {}).get("system"))
        message = user_message(value)
        # No copy here: the loop starts from a deep copy of its context (LOOP-ISO-1).
        context_messages = [*self._state["messages"], *([] if system is None else [system]), message]
        run = _ActiveRun(self._next_run_id)
        self._next_run_id += 1
        self._active = run
        self._emit({"type": "run_start", "runId": run.id, "message": message, **({} if system is None else {"system": system})})
        return asyncio.ensure_future(self._run(run, context_messages))

    async def _run(self, run: _ActiveRun, context_messages: list[Any]) -> dict[str, Any]:
        try:
            result = await drive(self.loop_run(self._loop_options(run, context_messages)))
        except Exception as error:  # implementation-defined (AGENT-LOOP-2): the loop itself failed
            failed = assistant_message([], "error", {"errorMessage": str(error)})
            result = {"reason": "error", "messages": [*context_messages, failed], "steps": 0}
        finally:
            # Inactive before run_end, so a run_end subscriber may start the next run (AGENT-RUN-5).
            # What the run's queues still hold goes with the run (AGENT-QUEUE-4).
            if self._active is run:
                self._active = None
        self._emit({"type": "run_end", "runId": run.id, "result": result})
        return copy.deepcopy(result)

    def loop_run(self, options: dict[str, Any]) -> LoopRun:
        """The loop a run plays: chapter 07's, with chapter 09's additions (11.6)."""
        return QueueingLoopRun(options)

    def _loop_options(self, run: _ActiveRun, messages: list[Any]) -> dict[str, Any]:
        def on_event(event: dict[str, Any]) -> None:
            if event["type"] == "turn_end":
                run.accepting_input = False  # from turn_end on, steer and follow_up throw (AGENT-QUEUE-1)
            self._emit({"type": "loop", "runId": run.id, "event": event})

        options: dict[str, Any] = {
            "model": self._options["model"],
            "tools": self._options["tools"],
            "context": {"messages": messages},
            "signal": run.controller.signal,
            "onEvent": on_event,
            "takeSteeringMessages": lambda: _drain(run.steering),
            "takeFollowUpMessages": lambda: _drain(run.follow_ups),
        }
        for name, key in (("toolExecutor", "executeToolCall"), ("maxSteps", "maxSteps")):
            if self._options.get(name) is not None:
                options[key] = self._options[name]
        return options


def _system_patch(system: dict[str, Any] | None) -> dict[str, Any] | None:
    """The run's system message, appended before its user message (AGENT-RUN-6); None without the option."""
    if system is None:
        return None
    patch: dict[str, Any] = {"role": "system", "content": system.get("content") or ""}
    if system.get("sections") is not None:
        patch["sections"] = copy.deepcopy(system["sections"])
    patch["timestamp"] = now_ms()
    return patch
