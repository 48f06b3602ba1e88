"""Broken variants of the chapter 09 Agent (``reference_impl/agent.py`` and the loop's 11.6 additions), one bug each.

Each :class:`AgentVariant` is a porting trap a student could write: no busy guard, run_end
emitted before the cleanup, the patch after the user message, subscribers called before the
state is reduced, one controller for every run, steering taken before the abort check...
``tests/judging/test_agent_variants.py`` proves that the variant fails its named case and only
cases that cite its clause, in its lab.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass
from typing import Any

from reference_impl import agent as agent_module
from reference_impl.abort import AbortController
from reference_impl.agent import Agent
from reference_impl.agent_loop import LoopRun, QueueingLoopRun, drive, structured_clone
from reference_impl.agent_state import reduce_agent_state
from reference_impl.ir import assistant_message, user_message
from tests.support.loop_variants import LoopVariant
from tests.support.variants import reference_binding


@dataclass(frozen=True)
class AgentVariant(LoopVariant):
    """A loop variant's fields, and the labs besides its own whose cases of the clause it may fail."""

    #: None by default; each use says why (the course's evidence for the clause sits in another lab's test).
    also_labs: tuple[str, ...] = ()


class _NoBusyGuard(Agent):
    def prompt(self, value: str, options: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
        self._active = None  # a second prompt starts a run of its own beside the first
        return super().prompt(value, options)


class _RunEndBeforeCleanup(Agent):
    def _emit(self, event: dict[str, Any]) -> None:
        if event["type"] == "run_end":
            active, self._active = self._active, self._active_at_end
            super()._emit(event)
            self._active = active
            return
        super()._emit(event)

    def loop_run(self, options: dict[str, Any]) -> LoopRun:
        # Remember the run: its run_end is emitted while it still counts as active.
        self._active_at_end = self._active
        return super().loop_run(options)


class _PatchAfterUser(Agent):
    def prompt(self, value: str, options: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
        # Only a run with a patch: the constructor's system message before a first user message stays put.
        self._with_patch = (options or {}).get("system") is not None
        return super().prompt(value, options)

    def _emit(self, event: dict[str, Any]) -> None:
        super()._emit(event)
        if event["type"] == "run_start" and "system" in event:
            messages = self._state["messages"]
            messages[-2], messages[-1] = messages[-1], messages[-2]

    def loop_run(self, options: dict[str, Any]) -> LoopRun:
        messages = options["context"]["messages"]
        if self._with_patch and len(messages) >= 2 and messages[-2]["role"] == "system" and messages[-1]["role"] == "user":
            messages[-2], messages[-1] = messages[-1], messages[-2]
        return super().loop_run(options)


class _NotifiesBeforeReducing(Agent):
    def _deliver(self, event: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            self._notify(listener, copy.deepcopy(event))
        self._state = reduce_agent_state(self._state, event)


class _SubscriberThrowEscapes(Agent):
    def _notify(self, listener: Any, event: dict[str, Any]) -> None:
        listener(event)  # one throw ends the delivery, and the run


class _SharesResult(Agent):
    """Hands out what it keeps: listeners get the very event, prompt resolves with the very result."""

    def _deliver(self, event: dict[str, Any]) -> None:
        self._state = reduce_agent_state(self._state, event)
        for listener in list(self._listeners):
            self._notify(listener, event)

    def _run(self, run: Any, context_messages: list[Any]) -> Any:
        async def shared() -> dict[str, Any]:
            result = await drive(self.loop_run(self._loop_options(run, context_messages)))
            self._active = None
            self._emit({"type": "run_end", "runId": run.id, "result": result})
            return result

        return shared()


class _ReentrantDelivery(Agent):
    def _emit(self, event: dict[str, Any]) -> None:
        self._deliver(event)  # at once, even while another event is being delivered


class _UnsubscribeIgnored(Agent):
    def subscribe(self, listener: Any) -> Any:
        super().subscribe(listener)
        return lambda: None


class _ListenersReadLive(Agent):
    def _deliver(self, event: dict[str, Any]) -> None:
        self._state = reduce_agent_state(self._state, event)
        index = 0
        while index < len(self._listeners):  # a listener added meanwhile gets this event too
            self._notify(list(self._listeners)[index], copy.deepcopy(event))
            index += 1


class _AbortThrowsWhileIdle(Agent):
    def abort(self) -> None:
        self._active.controller.abort()  # type: ignore[union-attr]


class _ControllerMadeLate(Agent):
    """The run's controller is made when its loop starts: an abort in a run_start listener reaches nothing."""

    def _loop_options(self, run: Any, messages: list[Any]) -> dict[str, Any]:
        run.controller = AbortController()
        return super()._loop_options(run, messages)


class _EmptySystemPromptWritten(Agent):
    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        if options.get("systemPrompt") == "":
            self._state["messages"] = [{"role": "system", "content": "", "timestamp": 0}]


class _SystemPromptFromOptions(Agent):
    @property
    def system_prompt(self) -> str | None:
        prompt = self._options.get("systemPrompt")
        return str(prompt) if prompt else None


class _TrustsStop(QueueingLoopRun):
    def after_stop(self) -> str | None:
        queued = self._take("takeSteeringMessages") or self._take("takeFollowUpMessages")
        self.messages.extend(queued)
        return None if queued else "stop"


class _NoSteeringAfterBatch(QueueingLoopRun):
    def after_batch(self) -> None:
        return None


class _FollowUpsFirst(QueueingLoopRun):
    def after_stop(self) -> str | None:
        if self.aborted():
            return "aborted"
        queued = self._take("takeFollowUpMessages") or self._take("takeSteeringMessages")
        self.messages.extend(queued)
        return None if queued else "stop"


class _ModelThrowEscapes(QueueingLoopRun):
    async def model_turn(self) -> Any:
        return structured_clone(await LoopRun.model_turn(self))  # a throw rejects the loop, as at chapter 07


class _ModelAnswerNotCopied(QueueingLoopRun):
    async def model_turn(self) -> Any:
        try:
            return await LoopRun.model_turn(self)  # the very message result() resolved with
        except Exception as error:
            return assistant_message([], "aborted" if self.aborted() else "error", {"errorMessage": str(error)})


class _ToolResultNotCloned(QueueingLoopRun):
    async def run_call(self, executor: Any, call: dict[str, Any]) -> Any:
        return await LoopRun.run_call(self, executor, call)


def _with_loop(run_class: type[LoopRun]) -> type[Agent]:
    class _Variant(Agent):
        def loop_run(self, options: dict[str, Any]) -> LoopRun:
            return run_class(options)

    return _Variant


def _taken(queue: list[Any]) -> list[Any]:
    taken = list(queue)
    queue.clear()
    return taken


class _QueuesOnTheAgent(Agent):
    """Steering and follow-ups kept on the Agent: what a run does not take, the next one does."""

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self._steering: list[Any] = []
        self._follow_ups: list[Any] = []

    def steer(self, value: str) -> None:
        super().steer(value)
        self._steering.append(self._active.steering.pop())  # type: ignore[union-attr]

    def follow_up(self, value: str) -> None:
        super().follow_up(value)
        self._follow_ups.append(self._active.follow_ups.pop())  # type: ignore[union-attr]

    def _loop_options(self, run: Any, messages: list[Any]) -> dict[str, Any]:
        options = super()._loop_options(run, messages)
        options["takeSteeringMessages"] = lambda: _taken(self._steering)
        options["takeFollowUpMessages"] = lambda: _taken(self._follow_ups)
        return options


class _InputOpenUntilRunEnd(Agent):
    """steer and followUp accepted as long as the run is active, turn_end or not."""

    def steer(self, value: str) -> None:
        if self._active is None:
            raise RuntimeError(agent_module.STEERING_CLOSED)
        self._active.steering.append(user_message(value))

    def follow_up(self, value: str) -> None:
        if self._active is None:
            raise RuntimeError(agent_module.FOLLOW_UP_CLOSED)
        self._active.follow_ups.append(user_message(value))


def _variant(name: str, agent: type[Agent], clause: str, lab: str, case: str, fragment: str, also: tuple[str, ...] = ()) -> AgentVariant:
    return AgentVariant(name, reference_binding(Agent=agent), clause, lab, case, fragment, also)


AGENT_VARIANTS: tuple[AgentVariant, ...] = (
    _variant("no-busy-guard", _NoBusyGuard, "AGENT-RUN-4", "9.2", "agent-course-busy-guard", "prompts.parallel"),
    _variant(
        "run-end-before-cleanup",
        _RunEndBeforeCleanup,
        "AGENT-RUN-5",
        "9.2",
        "agent-course-run-end-listener",
        "model request 2 to start",
        # A run_end listener's prompt is admitted only once the run is cleaned up: the queue's case (lab 9.3) needs it.
        also=("9.3",),
    ),
    _variant("patch-after-user", _PatchAfterUser, "AGENT-RUN-6", "9.2", "agent-course-system-prompt", "role"),
    _variant(
        "empty-system-prompt-written",
        _EmptySystemPromptWritten,
        "AGENT-RUN-1",
        "9.2",
        "agent-course-empty-system-prompt",
        "snapshots.start",
    ),
    _variant("system-prompt-from-options", _SystemPromptFromOptions, "AGENT-RUN-2", "9.2", "agent-course-system-prompt", "system_prompt"),
    _variant(
        "notifies-before-reducing",
        _NotifiesBeforeReducing,
        "AGENT-SUB-2",
        "9.3",
        "agent-course-state-before-notify",
        "status",
        # A run_end listener that prompts reads the state: unreduced, run 2 starts without run 1's answer (lab 9.2's case).
        also=("9.2",),
    ),
    _variant(
        "subscriber-throw-escapes", _SubscriberThrowEscapes, "AGENT-SUB-3", "9.3", "agent-course-state-before-notify", "prompts.one.status"
    ),
    _variant("unsubscribe-ignored", _UnsubscribeIgnored, "AGENT-SUB-1", "9.3", "agent-course-state-before-notify", "diagnostics"),
    _variant("listeners-read-live", _ListenersReadLive, "AGENT-SUB-1", "9.3", "agent-subscribed-during-delivery", "deliveries.late"),
    _variant(
        "reentrant-delivery",
        _ReentrantDelivery,
        "AGENT-SUB-4",
        "9.3",
        "agent-queued-event-reduced-after",
        "actions",
        # The course's own evidence for the queue is its Lab 9.2 test (the lifecycle of a run_end listener's run).
        also=("9.2",),
    ),
    _variant("shares-result", _SharesResult, "AGENT-COPY-1", "9.3", "agent-course-no-shared-references", "changed by the caller"),
    _variant(
        "model-answer-not-copied",
        _with_loop(_ModelAnswerNotCopied),
        "AGENT-LOOP-4",
        "9.3",
        "agent-model-answer-copied",
        "changed by the model",
    ),
    _variant(
        "tool-result-not-cloned",
        _with_loop(_ToolResultNotCloned),
        "AGENT-LOOP-3",
        "9.3",
        "agent-course-uncloneable-details",
        "not a JSON value",
    ),
    _variant(
        "abort-throws-while-idle", _AbortThrowsWhileIdle, "AGENT-ABORT-1", "9.4", "agent-abort-while-idle-does-nothing", "actions[0].error"
    ),
    _variant("controller-made-late", _ControllerMadeLate, "AGENT-ABORT-2", "9.4", "agent-course-abort-in-run-start", "prompts.cancel"),
    _variant(
        "trusts-stop",
        _with_loop(_TrustsStop),
        "AGENT-ABORT-4",
        "9.4",
        "agent-course-abort-ignored-by-model",
        "aborted",
        # The course's steer-then-abort evidence is its Lab 9.5 test.
        also=("9.5",),
    ),
    # Also lab 9.4: agent-stream-rejects-after-abort needs the abort to reach the run, and cites AGENT-LOOP-2 too.
    _variant(
        "model-throw-escapes", _with_loop(_ModelThrowEscapes), "AGENT-LOOP-2", "9.2", "agent-course-provider-throw", "steps", ("9.4",)
    ),
    _variant(
        "no-steering-after-batch",
        _with_loop(_NoSteeringAfterBatch),
        "AGENT-QUEUE-2",
        "9.5",
        "agent-course-steering-after-batch",
        "requests",
    ),
    _variant("follow-ups-first", _with_loop(_FollowUpsFirst), "AGENT-QUEUE-3", "9.5", "agent-steering-before-follow-ups", "requests[1]"),
    _variant(
        "queues-on-the-agent",
        _QueuesOnTheAgent,
        "AGENT-QUEUE-4",
        "9.5",
        "agent-course-error-run-queues-discarded",
        "prompts.retry.result.reason",
    ),
    _variant(
        "input-open-until-run-end",
        _InputOpenUntilRunEnd,
        "AGENT-QUEUE-1",
        "9.5",
        "agent-course-follow-ups-after-natural-stop",
        "actions[4].error",
    ),
)
