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

from .ir import now_ms, text
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
        if reason is not None:
            return run.finish(reason, steps)
        await run.run_batch(calls)
        if run.abort_after_batch():
            return run.finish("aborted", steps)
    return run.finish("maxSteps", run.max_steps)


async def run_agent_loop(options: dict[str, Any]) -> dict[str, Any]:
    """Run the loop until a turn ends it (spec/spec.md section 10, LOOP-*)."""
    return await drive(LoopRun(options))
