"""Causes that one case shows together are one cause; two bugs stay two (conformance/judging/shared_symptoms.py)."""

from __future__ import annotations

import pytest

from conformance.common.jsontypes import JsonObject
from conformance.judging import shared_symptoms
from conformance.judging.bearing import clause_hits
from conformance.judging.divergences import all_divergences, compare
from conformance.judging.failure_groups import group_failures
from conformance.judging.outcome import Divergence, Outcome
from conformance.judging.shared_symptoms import symptoms
from conformance.model.cases import Case
from conformance.model.clauses import Clause

MESSAGE: JsonObject = {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "socket reset", "timestamp": 1}
ERROR_EVENT: JsonObject = {"type": "error", "reason": "error", "error": MESSAGE}
CONSUMED: JsonObject = {"events": [ERROR_EVENT], "finished": True}
RESOLVED: JsonObject = {"state": "resolved", "value": MESSAGE, "same_object_as": "terminal_event"}
#: What a stream that does not take ``error`` as terminal shows: an unfinished consumer, a pending result.
UNFINISHED: JsonObject = {"events": [ERROR_EVENT], "finished": False}
PENDING: JsonObject = {"state": "pending", "same_object_as": None}
#: What a stream that resolves with a copy shows: another object, equal to the terminal one.
COPIED: JsonObject = {"state": "resolved", "value": MESSAGE, "same_object_as": None}


def failing(case_id: str, expected: list[JsonObject], observed: list[JsonObject], operation: str = "event_stream") -> tuple[Case, Outcome]:
    """A scenario case whose steps expect ``expected`` and saw ``observed``, judged as the engine judges it."""
    actions = ["consume" if "events" in expect else "result" for expect in expected]
    steps: tuple[JsonObject, ...] = tuple({"action": action, "expect": expect} for action, expect in zip(actions, expected, strict=True))
    # A ScriptedModel case cites its own clause: a user function's case citing the stream's would join it as its root.
    clauses = ("STREAM-2",) if operation == "event_stream" else ("SM-DONE-1",)
    case = Case(case_id, "scratch.yaml", 1, "03", "3.2", clauses, "scratch", operation, {}, steps=steps)
    observation: JsonObject = {"steps": list(observed)}
    divergence, step_index = compare(case, observation)
    assert divergence is not None, case_id
    return case, Outcome(case_id, "failed", str(divergence), 0.0, divergence=divergence, step_index=step_index, observation=observation)


def consume_then_result(case_id: str, consumed: JsonObject, result: JsonObject, operation: str = "event_stream") -> tuple[Case, Outcome]:
    return failing(case_id, [CONSUMED, RESOLVED], [consumed, result], operation)


def result_then_consume(case_id: str, result: JsonObject, consumed: JsonObject) -> tuple[Case, Outcome]:
    return failing(case_id, [RESOLVED, CONSUMED], [result, consumed])


def test_causes_one_case_shows_together_are_one_cause_named_by_the_largest_and_shown_by_its_own_case() -> None:
    unfinished = [consume_then_result(f"unfinished-{n}", UNFINISHED, PENDING) for n in range(2)]
    pending = result_then_consume("pending", PENDING, UNFINISHED)  # its first divergence is the pending result
    (group,) = group_failures([pending, *unfinished], {})
    assert str(group.cause) == "steps[*].finished: expected true, got false" and len(group.members) == 3
    assert group.linked == {"pending"} and group.example[0].id == "unfinished-0"


def test_a_key_another_key_decides_is_no_symptom_of_its_own() -> None:
    # A pending result has no value, so its identity is null too: that says nothing about copying.
    pending = result_then_consume("pending", PENDING, CONSUMED)
    copied = result_then_consume("copied", COPIED, CONSUMED)
    assert [divergence.path for divergence in symptoms(*pending)] == ["steps[0].state"]
    assert len(group_failures([pending, copied], {})) == 2


def test_without_decided_keys_the_pending_result_would_join_the_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above has teeth: counting ``same_object_as`` after a pending ``state`` merges two bugs."""
    monkeypatch.setattr(shared_symptoms, "DECIDED_BY", {})
    pending = result_then_consume("pending", PENDING, CONSUMED)
    copied = result_then_consume("copied", COPIED, CONSUMED)
    assert len(group_failures([pending, copied], {})) == 1


def test_a_case_caught_by_two_bugs_does_not_make_them_one() -> None:
    unfinished = [consume_then_result(f"unfinished-{n}", UNFINISHED, RESOLVED) for n in range(3)]
    copied = [consume_then_result(f"copied-{n}", CONSUMED, COPIED) for n in range(3)]
    both = consume_then_result("both", UNFINISHED, COPIED)  # one case shows both: 1 of 4, not half
    groups = group_failures([*unfinished, both, *copied], {})
    assert [(str(group.cause), len(group.members)) for group in groups] == [
        ("steps[*].finished: expected true, got false", 4),
        ('steps[*].same_object_as: expected "terminal_event", got null', 3),
    ]
    assert all(not group.linked for group in groups)


def test_a_symptom_seen_in_another_function_links_nothing() -> None:
    # A stream that copies its result shows in ScriptedModel's cases too, below their own first divergence.
    copied = [consume_then_result(f"copied-{n}", CONSUMED, COPIED) for n in range(2)]
    model = [consume_then_result(f"model-{n}", UNFINISHED, COPIED, "scripted_model") for n in range(2)]
    assert len(group_failures([*copied, *model], {})) == 2


def loop_case(case_id: str, observed: JsonObject) -> tuple[Case, Outcome]:
    """A pure operation's case (an agent loop run) that expected a stop after two steps and saw ``observed``."""
    expect: JsonObject = {"error": None, "trace": ["turn_end:stop"], "result": {"reason": "stop", "steps": 2}}
    case = Case(case_id, "scratch.yaml", 1, "07", "7.4", ("LOOP-BATCH-3",), "scratch", "run_agent_loop", {}, expect)
    divergence, _ = compare(case, observed)
    assert divergence is not None, case_id
    return case, Outcome(case_id, "failed", str(divergence), 0.0, divergence=divergence, observation=observed)


def test_a_symptom_most_cases_of_two_causes_show_makes_them_one_even_when_it_is_nobodys_first() -> None:
    # A batch that rejects when one call fails: the run throws, and nothing is returned.
    rejected = [loop_case(f"rejected-{n}", {"error": {"message": "boom"}, "trace": ["turn_end:stop"], "result": None}) for n in range(2)]
    cut_short = loop_case("cut-short", {"error": None, "trace": [], "result": None})
    (group,) = group_failures([*rejected, cut_short], {})
    assert group.pattern == "run_agent_loop error" and group.linked == {"cut-short"}


def test_keys_below_a_pure_operations_result_are_symptoms_of_their_own() -> None:
    # One key below the result: another reason and another step count are two symptoms, not one.
    case, outcome = loop_case("late", {"error": None, "trace": ["turn_end:stop"], "result": {"reason": "maxSteps", "steps": 1}})
    assert [divergence.path for divergence in symptoms(case, outcome)] == ["result.reason", "result.steps"]


def test_a_step_that_threw_stays_a_cause_of_its_own() -> None:
    # A port whose end() needs an argument throws there, and its consumer then never finishes:
    # the unfinished consumer follows from the throw, so the throw is not folded into it.
    ended: JsonObject = {"threw": None}
    threw: JsonObject = {"threw": "TypeError: end() missing 1 required positional argument"}
    unfinished = [consume_then_result(f"unfinished-{n}", UNFINISHED, RESOLVED) for n in range(3)]
    steps = [ended, CONSUMED]
    throwing = [failing(f"end-threw-{n}", steps, [threw, UNFINISHED]) for n in range(2)]
    groups = group_failures([*unfinished, *throwing], {})
    assert [(str(group.cause), len(group.members)) for group in groups] == [
        ("steps[*].finished: expected true, got false", 3),
        ("steps[*].threw: threw", 2),
    ]


def test_an_outcomes_symptoms_are_walked_once_however_often_its_failures_are_grouped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Grouping runs several times per submission: the second run reads each recorded observation's symptoms again from the cache."""
    walks: list[str] = []

    def counted(case: Case, observation: JsonObject) -> list[Divergence]:
        walks.append(case.id)
        return all_divergences(case, observation)

    monkeypatch.setattr(shared_symptoms, "all_divergences", counted)
    failures = [consume_then_result(f"unfinished-{n}", UNFINISHED, PENDING) for n in range(2)]
    first = group_failures(failures, {})
    assert sorted(walks) == ["unfinished-0", "unfinished-1"]
    assert group_failures(failures, {}) == first and len(walks) == 2
    # Another outcome of the same case (another run) is walked again: the cache is per outcome.
    again = consume_then_result("unfinished-0", UNFINISHED, PENDING)
    group_failures([again], {})
    assert len(walks) == 3


def test_a_clause_names_a_word_as_a_whole_word_only() -> None:
    clause = Clause("X-1", "The `result()` resolves with the terminal message; errorMessage is kept, the same object.", 1)
    words = {"result", "resolves", "errormessage", "message", "same object", "sult", "terminal_message", "same obj"}
    assert clause_hits(clause, words) == 5  # result, resolves, errormessage, message, same object
