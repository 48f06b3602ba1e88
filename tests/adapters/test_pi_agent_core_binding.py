"""The pi-agent-core-1 Python binding counts every case whatever the port raises, and `python:` plays a binding module through it."""

from __future__ import annotations

import asyncio
from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.adapters.kinds.python import Python
from conformance.adapters.pi_agent_core_binding import ENTRIES, PiAgentCoreBindingAdapter, trace_line
from conformance.adapters.settings import ImplSettings
from conformance.loading.loader import Suite, load_suite
from conformance.running.engine import run_alone
from examples import pi_agent_core_port as port


@pytest.fixture(scope="module")
def agent_suite() -> Suite:
    return load_suite(profile="pi-agent-core-1")


def raising_binding(error: BaseException, where: str) -> SimpleNamespace:
    """The example port with every entry point raising ``error``: when called (``call``) or once it runs (``run``); its Agent when made."""
    names = {name: getattr(port, name) for name in port.__all__}

    async def run() -> Any:
        await asyncio.sleep(0)
        raise error

    class Stream:
        def __aiter__(self) -> Any:
            return self

        async def __anext__(self) -> Any:
            return await run()

    def entry(streams: bool) -> Any:
        def call(*_args: Any) -> Any:
            if where == "call":
                raise error
            return Stream() if streams else run()

        return call

    def agent(_options: Any) -> Any:
        raise error  # an agent case's first call into the port is the Agent's constructor

    for binding_name, _prompts, streams in ENTRIES.values():
        names[binding_name] = entry(streams)
    return SimpleNamespace(**{**names, "Agent": agent})


def statuses(suite: Suite, binding: Any) -> tuple[Counter[str], set[str]]:
    adapter = PiAgentCoreBindingAdapter(binding, name="raising")
    results = [run_alone(adapter, case) for case in suite.cases]
    return Counter(outcome.status for outcome in results), {outcome.message for outcome in results}


@pytest.mark.parametrize("where", ["call", "run"])
@pytest.mark.parametrize(
    ("error", "named"),
    [
        (SystemExit(3), "SystemExit: 3"),
        (KeyboardInterrupt(), "KeyboardInterrupt"),
        (GeneratorExit("gone"), "GeneratorExit: gone"),
        (asyncio.CancelledError(), "CancelledError"),
    ],
)
def test_a_base_exception_of_the_port_errors_each_case_naming_it(agent_suite: Suite, error: BaseException, named: str, where: str) -> None:
    counts, messages = statuses(agent_suite, raising_binding(error, where))
    assert counts == {"errored": len(agent_suite.cases)}, (counts, messages)
    assert all(named in message for message in messages), messages


@pytest.mark.parametrize("where", ["call", "run"])
def test_an_exception_of_the_entry_point_is_the_runs_error(agent_suite: Suite, where: str) -> None:
    """The spec observes a rejection (PAC-LOOP-8, PAC-CONT-1): an ordinary exception is an observation, judged as any other."""
    counts, messages = statuses(agent_suite, raising_binding(RuntimeError("boom"), where))
    assert sum(counts.values()) == len(agent_suite.cases) and counts["failed"] >= len(agent_suite.cases) - 2, (counts, messages)
    assert not {"errored", "skipped"} & set(counts), (counts, messages)
    assert any('expected "Cannot continue: no messages in context" but got "boom"' in message for message in messages), messages


@pytest.mark.parametrize("where", ["call", "run"])
def test_not_implemented_skips_each_case(agent_suite: Suite, where: str) -> None:
    counts, messages = statuses(agent_suite, raising_binding(NotImplementedError("later"), where))
    assert counts == {"skipped": len(agent_suite.cases)}, (counts, messages)
    assert all("not implemented: later" in message for message in messages), messages


def test_an_event_that_is_not_json_fails_its_case(agent_suite: Suite) -> None:
    async def run_agent_loop(prompts: Any, context: Any, config: Any, emit: Any, signal: Any, stream_fn: Any) -> Any:
        await emit({"type": "agent_start", "when": object()})
        return await port.run_agent_loop(prompts, context, config, emit, signal, stream_fn)

    binding = SimpleNamespace(**{**{name: getattr(port, name) for name in port.__all__}, "run_agent_loop": run_agent_loop})
    case = next(case for case in agent_suite.cases if case.id == "pac-text-turn-run-agent-loop")
    outcome = run_alone(PiAgentCoreBindingAdapter(binding), case)
    assert outcome.status == "failed" and "an event the loop emitted is not a JSON value" in outcome.message, outcome.message


def test_new_messages_that_are_not_json_fail_the_case(agent_suite: Suite) -> None:
    async def run_agent_loop(prompts: Any, context: Any, config: Any, emit: Any, signal: Any, stream_fn: Any) -> Any:
        return [*(await port.run_agent_loop(prompts, context, config, emit, signal, stream_fn)), object()]

    binding = SimpleNamespace(**{**{name: getattr(port, name) for name in port.__all__}, "run_agent_loop": run_agent_loop})
    case = next(case for case in agent_suite.cases if case.id == "pac-text-turn-run-agent-loop")
    outcome = run_alone(PiAgentCoreBindingAdapter(binding), case)
    assert outcome.status == "failed" and "what the entry point returned is not a JSON value" in outcome.message, outcome.message


def test_python_plays_a_binding_module_through_the_profiles_binding() -> None:
    adapter = Python().make_adapter("examples.pi_agent_core_port", ImplSettings(), "pi-agent-core-1")
    assert isinstance(adapter, PiAgentCoreBindingAdapter) and adapter.profile == "pi-agent-core-1"
    assert type(Python().make_adapter("examples.pi_agent_core_port", ImplSettings(), "course")).__name__ == "BindingAdapter"


def test_trace_lines_name_what_each_event_is_about() -> None:
    assert trace_line({"type": "message_start", "message": {"role": "user"}}) == "message_start:user"
    assert (
        trace_line({"type": "message_update", "assistantMessageEvent": {"type": "text_delta"}, "message": {}})
        == "message_update:text_delta"
    )
    assert trace_line({"type": "tool_execution_end", "toolCallId": "c1"}) == "tool_execution_end:c1"
    assert trace_line({"type": "agent_end", "messages": []}) == "agent_end"


def test_a_binding_with_its_own_tool_type_gets_each_tool_through_it(agent_suite: Suite) -> None:
    made: list[dict[str, Any]] = []

    class Tool(SimpleNamespace):
        pass

    def agent_tool(**fields: Any) -> Any:
        made.append(fields)
        return Tool(**fields)

    binding = SimpleNamespace(**{**{name: getattr(port, name) for name in port.__all__}, "AgentTool": agent_tool})
    adapter = PiAgentCoreBindingAdapter(binding, name="own-tools")
    results = {case.id: run_alone(adapter, case) for case in agent_suite.cases}
    assert {case_id: o.message for case_id, o in results.items() if o.status != "passed"} == {}
    assert made and {"name", "label", "description", "parameters", "execute"} <= set(made[0])
    assert any(fields.get("execution_mode") == "sequential" for fields in made)
    assert all("execution_mode" not in fields for fields in made if fields["name"] not in {"slow", "fast"})


def test_hook_contexts_may_use_snake_case_keys(agent_suite: Suite) -> None:
    """A port whose hooks get ``{"tool_call": ..., "is_error": ...}`` dicts is read as well as one with upstream's keys."""

    def snake_hooks(config: dict[str, Any]) -> dict[str, Any]:
        def wrap(hook: Any) -> Any:
            async def snake(context: Any, signal: Any = None) -> Any:
                renamed = {"toolCall": "tool_call", "isError": "is_error", "assistantMessage": "assistant_message"}
                return await hook({renamed.get(key, key): value for key, value in context.items()}, signal)

            return snake

        return {key: wrap(value) if key.endswith("_tool_call") else value for key, value in config.items()}

    def run_agent_loop(prompts: Any, context: Any, config: Any, emit: Any, signal: Any, stream_fn: Any) -> Any:
        return port.run_agent_loop(prompts, context, snake_hooks(config), emit, signal, stream_fn)

    binding = SimpleNamespace(**{**{name: getattr(port, name) for name in port.__all__}, "run_agent_loop": run_agent_loop})
    hooked = [case for case in agent_suite.cases if "before-tool-call" in case.features or "after-tool-call" in case.features]
    adapter = PiAgentCoreBindingAdapter(binding, name="snake-hooks")
    assert hooked and {case.id: run_alone(adapter, case).message for case in hooked if run_alone(adapter, case).status != "passed"} == {}
