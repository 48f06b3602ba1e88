"""The binding's ``to_impl`` hook: an input the port's types cannot hold skips its case, with the port's reason (issue 37)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import reference_impl
from conformance.adapters.binding import BindingAdapter
from conformance.adapters.port_calls import InputNotHeld
from conformance.loading.loader import load_suite
from conformance.running.engine import run_alone


def _refusing_system_messages(value: Any) -> Any:
    if isinstance(value, dict) and value.get("role") == "system":
        raise NotImplementedError("my messages have no system role")
    return value


def _throwing(value: Any) -> Any:
    raise ValueError("the binding is broken")


def _binding(to_impl: Any) -> BindingAdapter:
    names = {name: getattr(reference_impl, name) for name in dir(reference_impl) if not name.startswith("_")}
    return BindingAdapter(SimpleNamespace(**names, to_impl=to_impl), name="typed")


def _text_of_cases() -> list[Any]:
    return [case for case in load_suite().cases if case.operation == "text_of"]


def test_not_implemented_from_to_impl_skips_the_case_with_the_ports_reason() -> None:
    cases = _text_of_cases()
    outcomes = {case.id: run_alone(_binding(_refusing_system_messages), case) for case in cases}
    system = [case.id for case in cases if case.input["message"].get("role") == "system"]
    others = [case.id for case in cases if case.id not in system]
    assert system and others
    assert {outcomes[name].status for name in system} == {"skipped"}
    assert all("my messages have no system role" in outcomes[name].message for name in system)
    assert {outcomes[name].status for name in others} == {"passed"}


def test_any_other_exception_from_to_impl_errors_the_case_as_a_binding_bug() -> None:
    outcome = run_alone(_binding(_throwing), _text_of_cases()[0])
    assert outcome.status == "errored" and "to_impl() threw ValueError" in outcome.message


def test_a_function_that_cannot_hold_its_input_skips_the_case_in_those_words() -> None:
    def text_of(message: Any) -> Any:
        if message.get("role") == "system":
            raise InputNotHeld("my messages have no system role")
        return reference_impl.text_of(message)

    names = {name: getattr(reference_impl, name) for name in dir(reference_impl) if not name.startswith("_")}
    adapter = BindingAdapter(SimpleNamespace(**{**names, "text_of": text_of}), name="typed")
    system = [case for case in _text_of_cases() if case.input["message"].get("role") == "system"]
    outcomes = [run_alone(adapter, case) for case in system]
    assert system and {outcome.status for outcome in outcomes} == {"skipped"}
    reason = "not implemented: text_of cannot hold this input: my messages have no system role"
    assert all(outcome.message == reason for outcome in outcomes)


def _refusing_the_tools_output(value: Any) -> Any:
    if value == {"type": "text", "text": "hi"}:
        raise InputNotHeld("my tool results hold no text")
    return value


def test_a_refusal_inside_the_ports_own_code_skips_the_case_though_the_port_caught_it() -> None:
    # The echo tool's output goes through to_impl inside its execute, which the port's loop calls
    # and whose exception it turns into an error tool result: the case would fail for no bug of it.
    [case] = [case for case in load_suite().cases if case.id == "loop-course-system-prefix"]
    outcome = run_alone(_binding(_refusing_the_tools_output), case)
    assert outcome.status == "skipped", outcome.message
    assert outcome.message == "not implemented: the binding's to_impl() cannot hold this input: my tool results hold no text"
