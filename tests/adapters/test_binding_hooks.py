"""The binding's ``to_impl`` hook: an input the port's types cannot hold skips its case, with the port's reason (issue 37)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import reference_impl
from conformance.adapters.binding import BindingAdapter
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
