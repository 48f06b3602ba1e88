"""Broken variants of the chapter 07 reference loop (``reference_impl/agent_loop.py``), one bug each.

Each :class:`LoopVariant` names the clause its bug breaks; ``tests/judging/test_loop_variants.py``
proves that the variant fails its named case, and only cases that cite that clause, in the
clause's own lab. Each bug is one a port of the course's loop can plausibly make.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import reference_impl
from reference_impl import agent_loop, tool
from tests.support.variants import reference_binding


@dataclass(frozen=True)
class LoopVariant:
    """A broken binding, the clause it breaks, its lab, and one case that must fail."""

    name: str
    binding: types.SimpleNamespace
    clause: str
    lab: str
    failing_case: str
    message_fragment: str


def _start_all(run: agent_loop.LoopRun, calls: list[Any]) -> Callable[..., Awaitable[Any]]:
    """Every call's tool_start, as the reference emits them; the executor the batch runs with."""
    for call in calls:
        run.emit({"type": "tool_start", "call": call})
    executor: Callable[..., Awaitable[Any]] = run.options.get("executeToolCall") or run._core_executor
    return executor


class _CompletionOrder(agent_loop.LoopRun):
    async def run_batch(self, calls: list[Any]) -> None:
        executor = _start_all(self, calls)

        async def run_and_append(call: Any) -> None:
            self.messages.append(await self.run_call(executor, call))

        await asyncio.gather(*(run_and_append(call) for call in calls))


class _ToolEndInCallOrder(agent_loop.LoopRun):
    async def run_batch(self, calls: list[Any]) -> None:
        # Every call awaited together, then one tool_end per result in call order: the events
        # no longer say which call settled first.
        executor = _start_all(self, calls)

        async def settled(call: Any) -> Any:
            try:
                return await executor(call, {"signal": self.signal, "reportProgress": self.progress_reporter(call)})
            except Exception as error:
                return tool.failed_result(call, error)

        results = await asyncio.gather(*(settled(call) for call in calls))
        for result in results:
            self.emit({"type": "tool_end", "result": result})
        self.messages.extend(results)


class _Sequential(agent_loop.LoopRun):
    async def run_batch(self, calls: list[Any]) -> None:
        executor = _start_all(self, calls)
        for call in calls:
            self.messages.append(await self.run_call(executor, call))


class _LazyToolStart(agent_loop.LoopRun):
    async def run_batch(self, calls: list[Any]) -> None:
        executor = self.options.get("executeToolCall") or self._core_executor

        async def start_and_run(call: Any) -> Any:
            self.emit({"type": "tool_start", "call": call})
            return await self.run_call(executor, call)

        self.messages.extend(await asyncio.gather(*(start_and_run(call) for call in calls)))


class _LosesSiblings(agent_loop.LoopRun):
    async def run_call(self, executor: Callable[..., Awaitable[Any]], call: dict[str, Any]) -> Any:
        result = await executor(call, {"signal": self.signal, "reportProgress": self.progress_reporter(call)})
        self.emit({"type": "tool_end", "result": result})
        return result


class _LeaksStack(agent_loop.LoopRun):
    async def run_call(self, executor: Callable[..., Awaitable[Any]], call: dict[str, Any]) -> Any:
        async def keeping_stack(call_: Any, context: Any) -> Any:
            try:
                return await executor(call_, context)
            except Exception as error:
                result = tool.failed_result(call_, error)
                result["details"] = {**result["details"], "stack": str(getattr(error, "stack", ""))}
                return result

        return await super().run_call(keeping_stack, call)


class _SharesCallerTranscript(agent_loop.LoopRun):
    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self.messages = options["context"]["messages"]


class _ContextToolsToModel(agent_loop.LoopRun):
    def request(self) -> dict[str, Any]:
        request = super().request()
        return {**request, "tools": self.options["context"].get("tools") or request["tools"]}


class _FoldsSystemMessages(agent_loop.LoopRun):
    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        systems = [index for index, message in enumerate(self.messages) if message["role"] == "system"]
        self.messages = [message for index, message in enumerate(self.messages) if message["role"] != "system" or index == systems[-1]]


class _TruncatesProgress(agent_loop.LoopRun):
    def progress_reporter(self, call: dict[str, Any]) -> Callable[[Any], None]:
        report = super().progress_reporter(call)
        return lambda content: report(content[:1])


class _CatchesStreamThrow(agent_loop.LoopRun):
    async def model_turn(self) -> Any:
        try:
            return await super().model_turn()
        except Exception as error:
            return reference_impl.assistant_message([], "error", {"errorMessage": str(error)})


class _Terminals(agent_loop.LoopRun):
    """A base for the variants that decide a turn's end wrongly in one way."""

    wrong: str = ""

    def terminal(self, assistant: Any, calls: list[Any], steps: int) -> str | None:
        reason = assistant["stopReason"]
        if self.wrong == "run-unexpected-stop" and reason == "stop" and calls:
            return None
        if self.wrong == "no-skipped-results" and reason in ("length", "error", "aborted"):
            return str(reason)
        if self.wrong == "empty-tooluse-continues" and reason == "toolUse" and not calls:
            return None
        if self.wrong == "limit-before-batch" and reason == "toolUse" and calls and steps == self.max_steps:
            return "maxSteps"
        return super().terminal(assistant, calls, steps)


def _terminals(wrong: str) -> type[agent_loop.LoopRun]:
    return type(f"_Terminals_{wrong}", (_Terminals,), {"wrong": wrong})


class _TwoTurnEndsAtLimit(agent_loop.LoopRun):
    def finish(self, reason: str, steps: int) -> dict[str, Any]:
        if reason == "maxSteps":
            self.emit({"type": "turn_end", "reason": reason})
        return super().finish(reason, steps)


class _AbortCheckedAfterRequest(agent_loop.LoopRun):
    def abort_before_request(self) -> bool:
        return False


class _NoAbortCheckAfterBatch(agent_loop.LoopRun):
    def abort_after_batch(self) -> bool:
        return False


class _SignalNotToModel(agent_loop.LoopRun):
    def model_options(self) -> dict[str, Any]:
        return {}


class _DefaultLimit33(agent_loop.LoopRun):
    default_max_steps = 33


def _binding(run_class: type[agent_loop.LoopRun]) -> types.SimpleNamespace:
    async def run_agent_loop(options: dict[str, Any]) -> dict[str, Any]:
        return await agent_loop.drive(run_class(options))

    return reference_binding(run_agent_loop=run_agent_loop)


def _variant(name: str, run_class: type[agent_loop.LoopRun], clause: str, lab: str, case: str, fragment: str) -> LoopVariant:
    return LoopVariant(name, _binding(run_class), clause, lab, case, fragment)


LOOP_VARIANTS: tuple[LoopVariant, ...] = (
    _variant(
        "shares-caller-transcript", _SharesCallerTranscript, "LOOP-ISO-1", "7.1", "loop-result-messages-new-array", "context_unchanged"
    ),
    _variant(
        "context-tools-to-model", _ContextToolsToModel, "LOOP-REQ-1", "7.1", "loop-request-ignores-context-tools", "requests[0].tools"
    ),
    _variant("catches-stream-throw", _CatchesStreamThrow, "LOOP-TURN-2", "7.1", "loop-model-stream-throws", "result"),
    _variant("folds-system-messages", _FoldsSystemMessages, "LOOP-SYS-1", "7.2", "loop-course-system-prefix", "result.messages"),
    _variant("truncates-progress", _TruncatesProgress, "LOOP-TOOL-2", "7.2", "loop-probe-tool-events", "content"),
    _variant("no-skipped-results", _terminals("no-skipped-results"), "LOOP-SKIP-1", "7.3", "loop-course-skip-length", "trace[7]"),
    _variant("runs-unexpected-stop", _terminals("run-unexpected-stop"), "LOOP-SKIP-2", "7.3", "loop-course-unexpected-stop", "received"),
    _variant(
        "empty-tooluse-continues", _terminals("empty-tooluse-continues"), "LOOP-SKIP-3", "7.3", "loop-course-tooluse-without-call", "trace"
    ),
    _variant("results-in-completion-order", _CompletionOrder, "LOOP-BATCH-2", "7.4", "loop-course-gated-batch", "result.messages[2]"),
    _variant("tool-end-in-call-order", _ToolEndInCallOrder, "LOOP-BATCH-2", "7.4", "loop-course-gated-batch", "stalled"),
    _variant("sequential-batch", _Sequential, "LOOP-BATCH-1", "7.4", "loop-course-gated-batch", "tool fast to start"),
    _variant("lazy-tool-start", _LazyToolStart, "LOOP-BATCH-1", "7.4", "loop-batch-starts-before-executing", "trace"),
    _variant("loses-siblings", _LosesSiblings, "LOOP-BATCH-3", "7.4", "loop-course-executor-rejection", "error"),
    _variant("leaks-stack", _LeaksStack, "LOOP-BATCH-3", "7.4", "loop-course-executor-rejection", "details"),
    _variant("aborts-after-request", _AbortCheckedAfterRequest, "LOOP-ABORT-1", "7.5", "loop-course-pre-aborted", "result.steps"),
    _variant(
        "no-abort-check-after-batch", _NoAbortCheckAfterBatch, "LOOP-ABORT-2", "7.5", "loop-abort-in-tool-on-last-step", "result.reason"
    ),
    _variant("signal-not-to-model", _SignalNotToModel, "LOOP-ABORT-3", "7.5", "loop-abort-while-model-streams", "result"),
    _variant("limit-before-batch", _terminals("limit-before-batch"), "LOOP-LIMIT-1", "7.5", "loop-course-max-steps-one", "result.messages"),
    _variant("two-turn-ends-at-limit", _TwoTurnEndsAtLimit, "LOOP-LIMIT-1", "7.5", "loop-max-steps-zero", "trace"),
    _variant("default-limit-33", _DefaultLimit33, "LOOP-LIMIT-2", "7.5", "loop-max-steps-default-32", "result"),
)
