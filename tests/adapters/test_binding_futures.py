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
