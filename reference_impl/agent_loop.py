"""Chapter 07: the agent loop (spec/spec.md section 10).

``run_agent_loop(options)`` asks the model, runs the tool calls it made, feeds the results
back, and repeats until a turn ends the run. ``options`` is a dict with the course's names:
``model`` (``stream(context, {"signal": ...})``), ``tools`` (a :class:`~.tool.ToolRegistry`),
``context`` (``{messages, tools?}``), and optionally ``signal``, ``onEvent(event)``,
``executeToolCall(call, context)`` and ``maxSteps`` (32 when absent).

The run resolves with ``{reason, messages, steps}``; every run emits exactly one
``turn_end`` event, its last.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from typing import Any

from .ir import assistant_message, now_ms, text
from .tool import execute_tool_call, failed_result

DEFAULT_MAX_STEPS = 32

#: Why a call was not run, by the reason a skipped result carries (LOOP-SKIP-1, LOOP-SKIP-2).
_EXPLANATIONS = {
    "length": "the model response was truncated",
    "unexpected-stop": "the model returned stop with a tool call",
    "error": "the model turn ended with error",
    "aborted": "the model turn ended with aborted",
}


def skipped_result(call: dict[str, Any], reason: str) -> dict[str, Any]:
    """The paired result of a call the loop did not run."""
    return {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call["name"],
        "content": [text(f"Tool call was not executed because {_EXPLANATIONS[reason]}.")],
        "details": {"skipped": True, "reason": reason},
        "isError": True,
        "timestamp": now_ms(),
    }


class LoopRun:
    """One run's state: its transcript, its options, and its limit.

    A class with one method per decision, so that a reader finds each clause in one place.
    """

    default_max_steps = DEFAULT_MAX_STEPS

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        # A deep copy: the caller's context is never written (LOOP-ISO-1).
        self.messages: list[Any] = copy.deepcopy(options["context"]["messages"])
        self.signal = options.get("signal")
        limit = options.get("maxSteps")
        # ``??``, not ``or``: a maxSteps of 0 is zero steps (LOOP-LIMIT-1).
        self.max_steps: int = self.default_max_steps if limit is None else limit

    def emit(self, event: dict[str, Any]) -> None:
        on_event = self.options.get("onEvent")
        if on_event is not None:
            on_event(event)

    def aborted(self) -> bool:
        return self.signal is not None and bool(self.signal.aborted)

    def abort_before_request(self) -> bool:
        return self.aborted()

    def abort_after_batch(self) -> bool:
        return self.aborted()

    def finish(self, reason: str, steps: int) -> dict[str, Any]:
        # Called once per run, on every path of drive(): the one turn_end (LOOP-END-2).
        self.emit({"type": "turn_end", "reason": reason})
        return {"reason": reason, "messages": self.messages, "steps": steps}

    def request(self) -> dict[str, Any]:
        """Messages and the registry's definitions, nothing else (LOOP-REQ-1)."""
        return {"messages": self.messages, "tools": self.options["tools"].definitions()}

    def model_options(self) -> dict[str, Any]:
        return {"signal": self.signal}

    async def model_turn(self) -> Any:
        """One request, its events forwarded in order, and the message ``result()`` gives (LOOP-TURN-1)."""
        stream = self.options["model"].stream(self.request(), self.model_options())
        async for event in stream:
            self.emit({"type": "model_event", "event": event})
        return await stream.result()

    def terminal(self, assistant: Any, calls: list[Any], steps: int) -> str | None:
        """The reason this turn ends the run with, its calls skipped; None when its calls are to run."""
        reason = assistant["stopReason"]
        if reason in ("length", "error", "aborted"):
            self.skip(calls, reason)
            return str(reason)
        if reason == "stop":
            self.skip(calls, "unexpected-stop")
            return "error" if calls else "stop"
        return None if calls else "error"

    def skip(self, calls: list[Any], reason: str) -> None:
        for call in calls:
            result = skipped_result(call, reason)
            self.messages.append(result)
            self.emit({"type": "tool_skipped", "result": result})

    async def run_batch(self, calls: list[Any]) -> None:
        """Every call at once; events in completion order, results appended in call order."""
        executor = self.options.get("executeToolCall") or self._core_executor
        for call in calls:
            self.emit({"type": "tool_start", "call": call})
        results = await asyncio.gather(*(self.run_call(executor, call) for call in calls))
        self.messages.extend(results)

    def progress_reporter(self, call: dict[str, Any]) -> Callable[[Any], None]:
        def report_progress(content: Any) -> None:
            self.emit({"type": "tool_progress", "callId": call["id"], "content": content})

        return report_progress

    async def run_call(self, executor: Callable[..., Awaitable[Any]], call: dict[str, Any]) -> Any:
        try:
            result = await executor(call, {"signal": self.signal, "reportProgress": self.progress_reporter(call)})
        except Exception as error:
            # An injected executor need not normalize; one failure must not lose its siblings.
            result = failed_result(call, error)
        self.emit({"type": "tool_end", "result": result})
        return result

    async def _core_executor(self, call: Any, context: Any) -> Any:
        return await execute_tool_call(call, self.options["tools"], context)

    def after_stop(self) -> str | None:
        """A text stop ends the run at chapter 07; :class:`QueueingLoopRun` may go on (None)."""
        return "stop"

    def after_batch(self) -> None:
        """Nothing at chapter 07; :class:`QueueingLoopRun` takes the steering queue here."""


class NotCloneable(TypeError):
    """A value ``structured_clone`` cannot copy (JavaScript's ``DataCloneError``)."""


def structured_clone(value: Any) -> Any:
    """A deep copy of a JSON-like value; anything else (a function) raises, as ``structuredClone`` does."""
    if isinstance(value, dict):
        return {key: structured_clone(item) for key, item in value.items()}
    if isinstance(value, list):
        return [structured_clone(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise NotCloneable(f"{type(value).__name__} cannot be cloned")


class QueueingLoopRun(LoopRun):
    """The loop from chapter 09 on (spec/spec.md 11.6): queues, a failing model turn, copies.

    ``options`` may hold ``takeSteeringMessages()`` and ``takeFollowUpMessages()`` (AGENT-LOOP-1).
    """

    def _take(self, name: str) -> list[Any]:
        take = self.options.get(name)
        return list(take()) if take is not None else []

    def after_stop(self) -> str | None:
        """Abort first, then steering, then follow-ups; None when some were appended (AGENT-ABORT-4, AGENT-QUEUE-3)."""
        if self.aborted():
            return "aborted"
        queued = self._take("takeSteeringMessages") or self._take("takeFollowUpMessages")
        self.messages.extend(queued)
        return None if queued else "stop"

    def after_batch(self) -> None:
        """Every steering message queued so far, before the next request (AGENT-QUEUE-2)."""
        self.messages.extend(self._take("takeSteeringMessages"))

    async def model_turn(self) -> Any:
        """A copy of the turn's message; a failing turn becomes an error (or aborted) message (AGENT-LOOP-2, -4)."""
        try:
            return structured_clone(await super().model_turn())
        except Exception as error:
            return assistant_message([], "aborted" if self.aborted() else "error", {"errorMessage": str(error)})

    async def run_call(self, executor: Callable[..., Awaitable[Any]], call: dict[str, Any]) -> Any:
        """The executor's result as a copy; one that cannot be copied fails its call (AGENT-LOOP-3)."""

        async def cloned(call: Any, context: Any) -> Any:
            result = await executor(call, context)
            try:
                return structured_clone(result)
            except NotCloneable:
                return failed_result(call, Exception("tool result is not structured-cloneable"))

        return await super().run_call(cloned, call)


async def drive(run: LoopRun) -> dict[str, Any]:
    """Step until a turn, the signal or the limit ends the run."""
    for steps in range(1, run.max_steps + 1):
        if run.abort_before_request():
            return run.finish("aborted", steps - 1)
        assistant = await run.model_turn()
        run.messages.append(assistant)
        run.emit({"type": "assistant_message", "message": assistant})
        calls = [block for block in assistant["content"] if block["type"] == "toolCall"]
        reason = run.terminal(assistant, calls, steps)
        if reason == "stop":
            reason = run.after_stop()
            if reason is None:
                continue  # queued messages were appended: the next step asks again
        if reason is not None:
            return run.finish(reason, steps)
        await run.run_batch(calls)
        if run.abort_after_batch():
            return run.finish("aborted", steps)
        run.after_batch()
    return run.finish("maxSteps", run.max_steps)


async def run_agent_loop(options: dict[str, Any]) -> dict[str, Any]:
    """Run the loop until a turn ends it (spec/spec.md section 10, LOOP-*)."""
    return await drive(LoopRun(options))
