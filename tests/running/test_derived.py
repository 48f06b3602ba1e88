"""The harness derives pi-ai-1's abort_summary itself: no adapter computes it, and one that still sends its own is overruled."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from conformance.common.jsontypes import JsonObject
from conformance.loading.loader import Suite, load_suite
from conformance.model.cases import Case
from conformance.running.derived import derive
from conformance.running.execution import run_case
from examples.pi_ai_port.conformance import ADAPTER


def _message(*texts: str) -> JsonObject:
    return {"role": "assistant", "content": [{"type": "text", "text": text} for text in texts], "stopReason": "stop"}


def _aborted(*texts: str) -> list[Any]:
    """The events of a stream aborted after it started the given text blocks."""
    kept = {"content": [{"type": "text", "text": text} for text in texts], "stopReason": "aborted", "errorMessage": "Request was aborted"}
    return [{"type": "start"}, {"type": "error", "reason": "aborted", "error": kept}]


def _case(input: JsonObject, steps: list[JsonObject]) -> Case:
    return Case(
        id="derived",
        file="scratch.yaml",
        line=1,
        chapter="",
        lab="faux-provider",
        clauses=("PA-FAUX-ABORT-3",),
        description="scratch",
        operation="faux_provider",
        input=input,
        steps=tuple(steps),
        profile="pi-ai-1",
    )


def test_each_aborted_consume_is_summed_up_against_the_message_its_call_plays() -> None:
    # c1 plays "alpha"; set_responses replaces the queue, so c2 plays "beta"; append_responses
    # queues "gamma" behind "delta", so c3 plays "delta", and c4, past the queue's end, nothing.
    case = _case(
        {"responses": [{"message": _message("alpha")}, {"message": _message("unused")}]},
        [
            {"action": "stream", "call": "c1"},
            {"action": "set_responses", "responses": [{"factory": _message("beta")}, {"message": _message("delta")}]},
            {"action": "append_responses", "responses": [{"factory_throws": "no"}]},
            {"action": "stream", "call": "c2"},
            {"action": "stream", "call": "c3"},
            {"action": "stream", "call": "c4"},
            {"action": "stream", "call": "c5"},
            {"action": "consume", "call": "c1", "abort_after": 2},
            {"action": "consume", "call": "c2", "abort_after": 2},
            {"action": "consume", "call": "c3", "abort_after": 2},
            {"action": "consume", "call": "c5", "abort_after": 2},
            {"action": "consume", "call": "c1"},
        ],
    )
    observed: list[Any] = (
        [{"threw": None}] * 7
        + [{"events": _aborted("alp"), "finished": True}] * 3
        + [
            {"events": _aborted("x"), "finished": True},
            {"events": _aborted("alp"), "finished": True},
        ]
    )
    observed[9] = {"events": _aborted("delt"), "finished": True}
    original = copy.deepcopy({"steps": observed})
    derived = derive(case, {"steps": observed})
    steps: Any = derived["steps"]  # JSON the assertions below walk
    assert isinstance(steps, list)
    prefixes = [step["abort_summary"]["content_is_prefix"] for step in steps[7:11]]
    # c1 kept a prefix of "alpha"; c2's "alp" is not one of "beta"; c3 kept a prefix of "delta"; c5 plays nothing.
    assert prefixes == [True, False, True, False]
    assert "abort_summary" not in steps[11]  # a consume without abort_after
    assert steps[7]["abort_summary"] == {
        "type": "error",
        "reason": "aborted",
        "stop_reason": "aborted",
        "error_message": "Request was aborted",
        "content_is_prefix": True,
        "start_first": True,
        "one_terminal": True,
    }
    assert {"steps": observed} == original  # the adapter's observation is left as it was


def test_a_consume_without_events_and_malformed_observations_are_left_alone() -> None:
    case = _case(
        {"responses": [{"message": _message("alpha")}]},
        [{"action": "stream", "call": "c1"}, {"action": "consume", "call": "c1", "abort_after": 1}],
    )
    threw: JsonObject = {"steps": [{"threw": "boom"}, {"threw": "there is no stream: stream() threw"}]}
    assert derive(case, threw) == threw
    malformed_observations: tuple[JsonObject, ...] = ({"steps": "no"}, {"steps": [{}]}, {})
    for malformed in malformed_observations:
        assert derive(case, malformed) == malformed  # judging reports it
    course = replace(case, profile="course")
    assert derive(course, {"steps": [{}, {"events": []}]}) == {"steps": [{}, {"events": []}]}


@pytest.fixture(scope="module")
def aborting_cases() -> list[Case]:
    suite: Suite = load_suite(profile="pi-ai-1")
    cases = [case for case in suite.cases if any("abort_after" in step for step in case.steps)]
    assert cases
    return cases


def test_the_adapters_no_longer_send_it_and_the_cases_still_pass(aborting_cases: list[Case]) -> None:
    for case in aborting_cases:
        observation = ADAPTER.perform(case.operation, case.input, list(case.steps))
        steps = observation["steps"]
        assert isinstance(steps, list) and not any(isinstance(step, dict) and "abort_summary" in step for step in steps)
        assert run_case(ADAPTER, case).status == "passed", case.id


def test_an_adapter_that_still_sends_its_own_summary_is_overruled(aborting_cases: list[Case]) -> None:
    class OldAdapter(type(ADAPTER)):  # type: ignore[misc]
        """Sends an abort_summary of its own, wrong on purpose, as adapters did before the harness computed it."""

        def faux_provider(self, input: JsonObject, steps: list[JsonObject]) -> JsonObject:
            observation: JsonObject = super().faux_provider(input, steps)
            observed_steps = observation["steps"]
            assert isinstance(observed_steps, list)
            for step, observed in zip(steps, observed_steps, strict=True):
                if "abort_after" in step and isinstance(observed, dict):
                    observed["abort_summary"] = {"type": "done", "stale": True}
            return observation

    old = OldAdapter(ADAPTER.binding, name="old")
    for case in aborting_cases:
        assert run_case(old, case).status == "passed", case.id
