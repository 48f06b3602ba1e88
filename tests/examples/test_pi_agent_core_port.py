"""The Python port of pi-agent-core's loop (examples/pi_agent_core_port) passes every pi-agent-core-1 case; its broken variants fail.

Each variant breaks one rule of spec/pi-agent-core-1/spec.md in the port and must fail the
cases of that rule alone, with a message naming the path where it shows.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.adapters.pi_agent_core_binding import PiAgentCoreBindingAdapter
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite, load_suite
from conformance.running.engine import run_alone
from examples.pi_agent_core_port import agent, loop, tool_calls
from examples.pi_agent_core_port.conformance import ADAPTER
from tests.support.cli_runner import cli

AREAS = {"loop", "tools", "hooks", "queues", "abort", "agent"}


@pytest.fixture(scope="module")
def agent_suite() -> Suite:
    return load_suite(profile="pi-agent-core-1")


def outcomes(suite: Suite, adapter: PiAgentCoreBindingAdapter = ADAPTER) -> dict[str, Outcome]:
    return {case.id: run_alone(adapter, case) for case in suite.cases}


def failures(suite: Suite) -> dict[str, str]:
    """The message of every case the (possibly broken) port does not pass."""
    return {case_id: f"{o.status}: {o.message}" for case_id, o in outcomes(suite).items() if o.status != "passed"}


def clauses_of(suite: Suite, case_ids: Iterable[str]) -> set[str]:
    by_id = {case.id: case for case in suite.cases}
    return {clause for case_id in case_ids for clause in by_id[case_id].clauses}


def only_clause(suite: Suite, failed: dict[str, str], clause: str) -> None:
    by_id = {case.id: case for case in suite.cases}
    assert failed, "the broken port fails no case"
    assert all(clause in by_id[case_id].clauses for case_id in failed), failed
    assert all(message.startswith("failed: ") for message in failed.values()), failed


def test_the_port_passes_every_case_with_none_skipped(agent_suite: Suite) -> None:
    assert not agent_suite.broken, agent_suite.problems
    assert {case.features[0] for case in agent_suite.cases} == AREAS
    results = outcomes(agent_suite)
    assert {case_id: (o.status, o.message) for case_id, o in results.items() if o.status != "passed"} == {}


def test_the_documented_commands_run_the_port_from_the_repository_root(tmp_path: Path) -> None:
    for impl in ("python:pi_agent_core_port.conformance:ADAPTER", "python:pi_agent_core_port"):  # an adapter, and the bare binding module
        report = tmp_path / "report.json"
        result = cli("run", "--profile", "pi-agent-core-1", "--impl", impl, "--report-json", str(report), env={"PYTHONPATH": "examples"})
        assert result.returncode == 0, result.stdout + result.stderr
        assert " 0 failed, 0 errored, 0 skipped" in result.stdout, result.stdout
        cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
        assert {case["area"] for case in cases} == AREAS and all(case["status"] == "passed" for case in cases)


def test_end_events_in_call_order_are_caught(agent_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """PAC-TOOL-3: ends in completion order; a port that emits executed calls' ends after the batch, in call order, fails."""
    held: dict[int, Any] = {}  # id(finalized) -> emit, for executed calls of a parallel batch
    real_end, real_gather = tool_calls._end, asyncio.gather

    async def end_later_if_executed(finalized: Any, emit: Any) -> None:
        if finalized.duration_ms is None:  # an immediate result, or aborted before it ran: ended in place
            await real_end(finalized, emit)
        else:
            held[id(finalized)] = emit

    async def gather_then_end(*entries: Any) -> list[Any]:
        batch = await real_gather(*entries)
        for finalized in batch:
            if id(finalized) in held:
                await real_end(finalized, held.pop(id(finalized)))
        return batch

    async def sequential_end(finalized: Any, emit: Any) -> None:
        await real_end(finalized, emit)

    monkeypatch.setattr(tool_calls, "_end", end_later_if_executed)
    monkeypatch.setattr(tool_calls, "asyncio", SimpleNamespace(gather=gather_then_end))
    real_sequential = tool_calls._sequential

    async def sequential(*args: Any) -> Any:
        monkeypatch.setattr(tool_calls, "_end", sequential_end)
        try:
            return await real_sequential(*args)
        finally:
            monkeypatch.setattr(tool_calls, "_end", end_later_if_executed)

    monkeypatch.setattr(tool_calls, "_sequential", sequential)
    failed = failures(agent_suite)
    # The shared batches (fixtures/shared/agent-loop.yaml) catch it too.
    assert set(failed) == {
        "pac-parallel-ends-by-completion-results-by-call",
        "loop-batch-three-reverse-completion",
        "loop-batch-second-waits-first-free",
    }, failed
    assert "tool_execution_end:fast-call" in failed["pac-parallel-ends-by-completion-results-by-call"]


def test_the_course_rule_of_an_abort_between_turns_is_caught(agent_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """PAC-ABORT-1: upstream never checks the signal between turns; a port that ends the run there fails."""
    real = loop._stream_assistant_response

    async def ending_when_aborted(context: Any, config: Any, signal: Any, emit: Any, stream_fn: Any) -> Any:
        if getattr(signal, "aborted", False) and any(m.get("role") == "assistant" for m in context["messages"]):
            return {**context["messages"][-1], "role": "assistant", "content": [], "stopReason": "aborted"}
        return await real(context, config, signal, emit, stream_fn)

    monkeypatch.setattr(loop, "_stream_assistant_response", ending_when_aborted)
    failed = failures(agent_suite)
    only_clause(agent_suite, failed, "PAC-ABORT-1")
    assert "pac-abort-in-tool-next-request-made" in failed, failed


def test_a_truncated_call_that_executes_is_caught(agent_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """PAC-TOOL-7: the calls of a length turn are not executed; a port that runs them (the 0.85-era rule) fails."""
    turn: dict[str, Any] = {}
    real_stream = loop._stream_assistant_response

    async def remember(context: Any, config: Any, signal: Any, emit: Any, stream_fn: Any) -> Any:
        message = await real_stream(context, config, signal, emit, stream_fn)
        turn.update(context=context, config=config, signal=signal, message=message)
        return message

    async def execute_them(calls: list[Any], emit: Any) -> Any:
        return await tool_calls.execute_tool_calls(turn["context"], turn["message"], turn["config"], turn["signal"], emit)

    monkeypatch.setattr(loop, "_stream_assistant_response", remember)
    monkeypatch.setattr(loop, "fail_truncated", execute_them)
    failed = failures(agent_suite)
    only_clause(agent_suite, failed, "PAC-TOOL-7")


def test_a_continue_that_copies_the_callers_transcript_is_caught(agent_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """PAC-CONT-2: continuing grows the caller's own messages list; a port that copies it fails."""
    real = loop.run_agent_loop_continue

    async def copying(context: Any, *rest: Any) -> Any:
        return await real({**context, "messages": list(context["messages"])}, *rest)

    monkeypatch.setattr(loop, "run_agent_loop_continue", copying)
    import examples.pi_agent_core_port as port

    monkeypatch.setattr(port, "run_agent_loop_continue", copying)
    failed = failures(agent_suite)
    only_clause(agent_suite, failed, "PAC-CONT-2")
    assert "context_unchanged: expected false but got true" in failed["pac-continue-grows-callers-transcript"]


def test_a_prepare_request_called_once_per_run_is_caught(agent_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """PAC-REQ-1: prepare_request runs before every request; a port that calls it before the first alone fails."""
    real = loop._call
    called: list[Any] = []  # the functions already called once (kept, so that no id is reused)

    async def first_request_only(config: dict[str, Any], name: str, *arguments: Any) -> Any:
        function = config.get(name)
        if name == "prepare_request" and function is not None:
            if any(seen is function for seen in called):
                return None
            called.append(function)
        return await real(config, name, *arguments)

    monkeypatch.setattr(loop, "_call", first_request_only)
    failed = failures(agent_suite)
    assert "pac-prepare-request-before-every-request" in failed, failed
    assert all(clauses_of(agent_suite, [case_id]) & {"PAC-REQ-1", "PAC-REQ-2", "PAC-REQ-3"} for case_id in failed), failed
    assert "turn_functions.prepare_request: expected 2 items but got 1" in failed["pac-prepare-request-before-every-request"], failed


def test_a_continue_decision_ignored_is_caught(agent_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """PAC-FINISH-3: {action: continue} on a turn that would end the run adds one; a port that ignores it fails that case alone."""
    real = loop._call

    async def ignoring_continue(config: dict[str, Any], name: str, *arguments: Any) -> Any:
        answer = await real(config, name, *arguments)
        return None if name == "finish_turn" and answer == {"action": "continue"} else answer

    monkeypatch.setattr(loop, "_call", ignoring_continue)
    failed = failures(agent_suite)
    only_clause(agent_suite, failed, "PAC-FINISH-3")
    assert set(failed) == {"pac-finish-turn-continue-adds-turn"}, failed


def test_queues_that_drain_everything_whatever_their_mode_are_caught(agent_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """PAC-AGENT-7: one-at-a-time gives one message per drain; a port whose queues always give all (the course's rule) fails."""
    monkeypatch.setattr(agent._Queue, "peek", lambda queue: list(queue.messages))
    failed = failures(agent_suite)
    only_clause(agent_suite, failed, "PAC-AGENT-7")
    assert {"pac-agent-steering-one-at-a-time", "pac-agent-follow-up-one-at-a-time"} <= set(failed), failed


def test_a_run_failure_that_rejects_the_prompt_is_caught(agent_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """PAC-AGENT-9: a run whose loop raises ends with a failure message; a port that lets prompt() raise instead fails."""

    async def reraise(self: Any, error: Exception, aborted: bool) -> None:
        raise error

    monkeypatch.setattr(agent.Agent, "_fail", reraise)
    failed = failures(agent_suite)
    only_clause(agent_suite, failed, "PAC-AGENT-9")
    assert "prompts.p1.status: expected" in failed["pac-agent-stream-throws"], failed


def test_a_port_without_queue_modes_opts_out_of_them_alone(agent_suite: Suite) -> None:
    options = ["--profile", "pi-agent-core-1", "--impl", "python:pi_agent_core_port", "--without-feature", "queue-modes"]
    result = cli("run", *options, env={"PYTHONPATH": "examples"})
    assert result.returncode == 0, result.stdout + result.stderr
    moded = [case.id for case in agent_suite.cases if "queue-modes" in case.features]
    assert moded and f"{len(moded)} x feature queue-modes not claimed" in result.stdout, result.stdout
    assert f"{len(agent_suite.cases) - len(moded)} passed, 0 failed" in result.stdout, result.stdout


def test_a_port_without_one_entry_point_skips_its_cases_alone(agent_suite: Suite) -> None:
    import examples.pi_agent_core_port as port

    binding = SimpleNamespace(**{name: getattr(port, name) for name in port.__all__ if name != "agent_loop"})
    results = outcomes(agent_suite, PiAgentCoreBindingAdapter(binding, name="no-agent-loop"))
    streamed = {case.id for case in agent_suite.cases if case.input.get("entry") == "agentLoop"}
    assert streamed and {results[case_id].status for case_id in streamed} == {"skipped"}
    assert all(results[case_id].message.endswith("no-agent-loop has no agent_loop") for case_id in streamed)
    assert all(outcome.status == "passed" for case_id, outcome in results.items() if case_id not in streamed)


def test_a_port_without_follow_ups_opts_out_of_that_function_alone(agent_suite: Suite) -> None:
    options = {"--profile": "pi-agent-core-1", "--impl": "python:pi_agent_core_port", "--without-feature": "get-follow-up-messages"}
    result = cli("run", *(part for pair in options.items() for part in pair), env={"PYTHONPATH": "examples"})
    assert result.returncode == 0, result.stdout + result.stderr
    follow_ups = [case.id for case in agent_suite.cases if "follow_up" in config_of(case.input)]
    assert follow_ups and f"{len(follow_ups)} x feature get-follow-up-messages not claimed" in result.stdout, result.stdout
    assert f"{len(agent_suite.cases) - len(follow_ups)} passed, 0 failed" in result.stdout, result.stdout


def config_of(input_value: Any) -> dict[str, Any]:
    config = input_value.get("config") if isinstance(input_value, dict) else None
    return config if isinstance(config, dict) else {}
