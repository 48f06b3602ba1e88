"""The Python binding never cancels a future that belongs to the port, and no case goes uncounted (issue 26).

After a ``result()`` step that finds the result still pending, the binding stopped waiting by
cancelling what it awaited. A port whose ``result()`` hands out its own future (unshielded)
had that future cancelled, and its next ``result()`` raised ``CancelledError``, a
``BaseException`` that escaped ``run_case`` and lost the case from every total.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import reference_impl
from conformance.adapters.binding import BindingAdapter
from conformance.adapters.interface import Adapter
from conformance.loading.loader import load_suite
from conformance.running.engine import run_alone
from reference_impl import event_stream


def unshielded_result(self: Any) -> asyncio.Future[Any]:
    """The reference's result(), handing out the stream's own future, as a plain port may."""
    if self._future is None:
        self._future = asyncio.get_running_loop().create_future()
        if self._outcome is not None:
            self._future.set_result(self._outcome[0])
    return self._future  # type: ignore[no-any-return]


def test_a_port_whose_result_is_its_own_future_passes_every_stream_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(event_stream.EventStream, "result", unshielded_result)
    adapter = BindingAdapter(reference_impl, name="unshielded")
    cases = [case for case in load_suite().cases if case.operation in ("event_stream", "scripted_model")]
    outcomes = [run_alone(adapter, case) for case in cases]
    failed = [(outcome.case_id, outcome.message) for outcome in outcomes if outcome.status != "passed"]
    assert failed == []


class _Cancelling(Adapter):
    """An adapter whose operation raises CancelledError (a BaseException), as a port's cancelled future does."""

    name = "cancelling"

    def text_of(self, input: Any) -> Any:
        raise asyncio.CancelledError()


def test_a_base_exception_from_the_port_is_an_errored_case_not_a_lost_one() -> None:
    case = next(case for case in load_suite().cases if case.operation == "text_of")
    outcome = run_alone(_Cancelling(), case)
    assert outcome.status == "errored" and "CancelledError" in outcome.message


class _Exiting(Adapter):
    """An adapter whose port code raises what would stop a Python program: ``SystemExit(3)`` or ``KeyboardInterrupt``."""

    name = "exiting"

    def __init__(self, raised: BaseException) -> None:
        self.raised = raised

    def text_of(self, input: Any) -> Any:
        raise self.raised


@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt(), GeneratorExit()], ids=type)
def test_an_exit_raised_by_port_code_errors_its_case_and_the_run_goes_on(raised: BaseException) -> None:
    cases = [case for case in load_suite().cases if case.operation == "text_of"][:3]
    outcomes = [run_alone(_Exiting(raised), case) for case in cases]
    assert [outcome.status for outcome in outcomes] == ["errored"] * 3
    assert all(f"the implementation raised {type(raised).__name__}" in outcome.message for outcome in outcomes)


@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt()], ids=type)
def test_the_server_answers_an_exit_raised_by_port_code_and_serves_the_next_request(raised: BaseException) -> None:
    from conformance.server import answer

    request = {"seq": 7, "op": "text_of", "input": {"message": {"role": "user", "content": "x", "timestamp": 0}}}
    response = answer(_Exiting(raised), request)  # type: ignore[arg-type]
    assert response["ok"] is False and response["seq"] == 7
    assert f"the implementation raised {type(raised).__name__}" in str(response["error"])
