"""Known readings of a symptom (conformance/feedback/readings.py): a value from the wrong turn, message or step is said to be one."""

from __future__ import annotations

from conformance.feedback.failure_report import failure_report
from conformance.feedback.readings import symptom_reading
from conformance.judging.outcome import Divergence, Outcome
from conformance.model.cases import Case

PRE_ABORTED = "sm-abort-pre-aborted-single-error-next-call-plays-next-turn"


def failed(case: Case, path: str, expected: str, actual: str, step_index: int | None = None) -> Outcome:
    divergence = Divergence(path, expected, actual)
    return Outcome(case.id, "failed", str(divergence), 0.0, divergence, step_index)


def test_a_timestamp_of_an_earlier_turn_reads_as_a_replayed_turn(cases_by_id: dict[str, Case]) -> None:
    case = cases_by_id[PRE_ABORTED]
    reading = symptom_reading(case, failed(case, "steps[4].events[0].partial.timestamp", "5002", "5001", 4))
    assert reading is not None
    assert reading.startswith("timestamp 5001 belongs to turns[0], 5002 to turns[1]: ")
    assert "the second call (c2) replayed the first turn" in reading


def test_a_text_of_a_later_turn_reads_as_a_skipped_turn(cases_by_id: dict[str, Case]) -> None:
    case = cases_by_id[PRE_ABORTED]
    reading = symptom_reading(case, failed(case, "steps[4].events[1].partial.content[0].text", '"先看"', '"第二轮"', 4))
    assert reading is not None
    assert reading.startswith('text "第二轮" belongs to turns[1], "先看" to turns[0]: ')
    assert "the second call (c2) played turns[1], skipping turns[0]" in reading


def test_a_timestamp_of_a_later_message_reads_as_taken_from_it(cases_by_id: dict[str, Case]) -> None:
    case = cases_by_id["sys-replay-timestamp-zero"]
    reading = symptom_reading(case, failed(case, "value.timestamp", "0", "50"))
    assert reading == (
        "timestamp 50 belongs to messages[1], 0 to messages[0]: "
        "the value was taken from a later message (messages[1]) instead of messages[0]"
    )


def test_no_reading_when_the_value_matches_nothing_or_every_item(cases_by_id: dict[str, Case]) -> None:
    case = cases_by_id[PRE_ABORTED]
    assert symptom_reading(case, failed(case, "steps[4].events[0].partial.timestamp", "5002", "4999", 4)) is None
    # Both turns have usage.input 10: equal to every item is no evidence of a wrong one.
    assert symptom_reading(case, failed(case, "steps[4].events[0].partial.usage.input", "11", "10", 4)) is None
    # A missing key, a flag, a value cut short: nothing to recognise.
    assert symptom_reading(case, failed(case, "steps[4].events[0].partial.timestamp", "5002", "nothing (the key is missing)", 4)) is None
    assert symptom_reading(case, failed(case, "steps[4].finished", "true", "false", 4)) is None
    assert symptom_reading(case, Outcome(case.id, "errored", "timed out", 0.0)) is None


def scenario(steps: list[dict[str, object]]) -> Case:
    return Case(
        id="t-steps",
        file="fixtures/t.yaml",
        line=1,
        chapter="04",
        lab="4.2",
        clauses=("SM-ABORT-1",),
        description="",
        operation="scripted_model",
        input={"turns": []},
        steps=tuple(steps),  # type: ignore[arg-type]
    )


def test_a_text_another_step_expects_reads_as_behaving_like_that_step() -> None:
    aborted = [{"type": "error", "error": {"errorMessage": "Request was aborted"}}]
    exhausted = [{"type": "error", "error": {"errorMessage": "Script exhausted"}}]
    case = scenario(
        [
            {"action": "stream", "call": "c1", "signal": "aborted", "expect": {"threw": None}},
            {"action": "consume", "call": "c1", "expect": {"events": aborted}},
            {"action": "stream", "call": "c2", "expect": {"threw": None}},
            {"action": "consume", "call": "c2", "expect": {"events": exhausted}},
        ]
    )
    outcome = failed(case, "steps[3].events[0].error.errorMessage", '"Script exhausted"', '"Request was aborted"', 3)
    reading = symptom_reading(case, outcome)
    assert reading == (
        'errorMessage "Request was aborted" is what steps[1] (consume of c1) expects, not steps[3] (consume of c2): '
        "this step behaved like that one"
    )
    # Kinds (an event type) are shared by many steps: no reading from them.
    assert symptom_reading(case, failed(case, "steps[3].events[0].type", '"error"', '"text_delta"', 3)) is None


def test_the_reading_is_in_the_feedback_under_the_first_line(cases_by_id: dict[str, Case]) -> None:
    case = cases_by_id[PRE_ABORTED]
    lines = failure_report(case, failed(case, "steps[4].events[0].partial.timestamp", "5002", "5001", 4), {}).splitlines()
    assert lines[1].startswith("  reading: timestamp 5001 belongs to turns[0]")
    other = failure_report(case, failed(case, "steps[4].events[0].partial.timestamp", "5002", "4999", 4), {})
    assert "reading:" not in other
