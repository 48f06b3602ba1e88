"""One case's outcome: timeouts, crashes and malformed observations fail only that case."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import pytest

from conformance.adapters.interface import Adapter, HarnessError, ImplementationThrew, OperationNotSupported
from conformance.adapters.reference import create as reference_adapter
from conformance.common.jsontypes import JsonObject
from conformance.judging.outcome import Divergence, Outcome, OutcomeFormatError
from conformance.model.cases import BrokenCase, Case
from conformance.running.execution import run_case
from tests.support.scratch_cases import TEXT_CASE


class Scripted(Adapter):
    """An adapter whose text_of does whatever the test says."""

    def __init__(self, behaviour: object) -> None:
        self.behaviour = behaviour
        self.cancelled = threading.Event()

    def text_of(self, input: JsonObject) -> JsonObject:
        if isinstance(self.behaviour, BaseException):
            raise self.behaviour
        if self.behaviour == "hang":
            self.cancelled.wait(10)
            return {}
        return self.behaviour  # type: ignore[return-value]

    def cancel(self) -> None:
        self.cancelled.set()


def test_reference_passes() -> None:
    assert run_case(reference_adapter(), TEXT_CASE).status == "passed"


def test_divergence_fails_with_path() -> None:
    outcome = run_case(Scripted({"value": "ho", "input_unchanged": True}), TEXT_CASE)
    assert outcome.status == "failed"
    assert outcome.message == 'value: expected "hi" but got "ho"'


def test_hang_times_out_and_cancels_the_adapter() -> None:
    adapter = Scripted("hang")
    started = time.perf_counter()
    outcome = run_case(adapter, TEXT_CASE, timeout_s=0.2)
    assert time.perf_counter() - started < 1.0
    assert outcome.status == "failed"
    assert outcome.message == f"timed out: {TEXT_CASE.operation} did not return within 0.2 s"
    assert adapter.cancelled.is_set()


class Uncancellable(Scripted):
    """A hang that ``cancel`` cannot stop (a busy loop in student code): its worker stays busy."""

    def cancel(self) -> None:
        pass


def test_cases_run_from_several_threads_never_wait_behind_each_other() -> None:
    # The grader retries cases from several threads at once: a hang in one must not delay another.
    hang = Uncancellable("hang")
    results: dict[str, str] = {}

    def hanging() -> None:
        results["hang"] = run_case(hang, TEXT_CASE, timeout_s=0.5).status

    thread = threading.Thread(target=hanging)
    thread.start()
    time.sleep(0.05)
    started = time.perf_counter()
    assert run_case(reference_adapter(), TEXT_CASE, timeout_s=0.3).status == "passed"
    assert time.perf_counter() - started < 0.3
    thread.join()
    assert results["hang"] == "failed"
    # After a timeout the worker that hung is left behind: the next case runs on a new one.
    again = Uncancellable("hang")
    assert run_case(again, TEXT_CASE, timeout_s=0.2).status == "failed"
    assert run_case(reference_adapter(), TEXT_CASE).status == "passed"
    hang.cancelled.set()
    again.cancelled.set()


def test_a_cases_own_timeout_is_a_floor_under_the_option() -> None:
    # spec/fixture-format.md, Timeouts: the larger of the case's timeout_s and --timeout holds.
    slow = Case(**{**TEXT_CASE.__dict__, "timeout_s": 0.3})
    assert "within 0.3 s" in run_case(Scripted("hang"), slow, timeout_s=0.1).message, "a shorter --timeout does not cut it"
    assert "within 0.4 s" in run_case(Scripted("hang"), slow, timeout_s=0.4).message, "a longer --timeout lengthens it"
    assert (slow.timeout_with(None), TEXT_CASE.timeout_with(None), TEXT_CASE.timeout_with(5)) == (1.0, 1.0, 5)
    assert Case(**{**TEXT_CASE.__dict__, "timeout_s": 2}).timeout_with(None) == 2


def test_not_supported_is_skipped() -> None:
    outcome = run_case(Adapter(), TEXT_CASE)
    assert outcome.status == "skipped"
    assert "does not implement text_of" in outcome.message


def test_implementation_threw_fails() -> None:
    outcome = run_case(Scripted(ImplementationThrew("textOf() threw TypeError: boom")), TEXT_CASE)
    assert (outcome.status, outcome.message) == ("failed", "the implementation threw: textOf() threw TypeError: boom")


def test_harness_error_errors() -> None:
    outcome = run_case(Scripted(HarnessError("process exited with status 1")), TEXT_CASE)
    assert outcome.status == "errored" and "process exited with status 1" in outcome.message


def test_broken_adapter_errors_only_its_case() -> None:
    outcome = run_case(Scripted(KeyError("oops")), TEXT_CASE)
    assert outcome.status == "errored" and "the adapter failed: KeyError" in outcome.message


def test_malformed_observation_errors() -> None:
    outcome = run_case(Scripted({"value": 3, "input_unchanged": "yes"}), TEXT_CASE)
    assert outcome.status == "errored"
    assert "malformed observation" in outcome.message


def test_broken_case_errors_with_its_problems() -> None:
    broken = BrokenCase("x", "f.yaml", 3, ("lab: '9' is not one of ...",))
    outcome = run_case(Scripted(OperationNotSupported()), broken)
    assert outcome.status == "errored"
    assert "f.yaml:3: lab: '9' is not one of ..." in outcome.message


def test_a_wait_ends_when_the_loop_is_idle_and_still_sees_late_timers() -> None:
    """Idle settling: nothing pending ends the wait long before the deadline; a live timer is waited for."""
    import asyncio
    import time

    from conformance.adapters.event_loop import wait_settled

    async def scenario() -> tuple[bool, float, bool]:
        loop = asyncio.get_running_loop()
        never: asyncio.Future[None] = loop.create_future()
        started = time.perf_counter()
        idle_result = await wait_settled(never, 30.0)
        idle_elapsed = time.perf_counter() - started
        late: asyncio.Future[None] = loop.create_future()
        loop.call_later(0.05, late.set_result, None)
        return idle_result, idle_elapsed, await wait_settled(late, 30.0)

    idle_result, idle_elapsed, late_result = asyncio.run(scenario())
    assert idle_result is False and idle_elapsed < 10.0  # far from the 30 s deadline: the loop was idle
    assert late_result is True


def test_an_outcome_survives_its_trip_through_json() -> None:
    class Wrong(Adapter):
        def text_of(self, input: JsonObject) -> JsonObject:
            return {"value": "ho", "input_unchanged": True}

    failed = run_case(Wrong(), TEXT_CASE)
    assert failed.status == "failed" and failed.divergence is not None and failed.observation is not None
    for outcome in (failed, replace(failed, status="errored", divergence=None, timed_out=True, given_up=True, hung=True, step_index=2)):
        assert Outcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome


@pytest.mark.parametrize(
    "change",
    [
        {"status": "great"},
        {"case_id": 7},
        {"duration_s": "1"},
        {"observation": [1]},
        {"step_index": 1.5},
        {"divergence": {"path": "value"}},
    ],
)
def test_json_that_is_not_an_outcome_is_refused(change: dict[str, object]) -> None:
    good = Outcome("c", "failed", "m", 0.5, divergence=Divergence("value", '"hi"', '"ho"')).to_json()
    assert Outcome.from_json(good).divergence == Divergence("value", '"hi"', '"ho"')
    with pytest.raises(OutcomeFormatError):
        Outcome.from_json({**good, **change})
