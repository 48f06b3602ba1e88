"""Special values are said in words: matchers in expected values, null and false where they mean something, clock readings."""

from __future__ import annotations

from conformance.common.jsontypes import JsonValue
from conformance.judging.glossary import explain
from conformance.judging.matcher import first_divergence, render_expected
from conformance.judging.outcome import Divergence


def test_matchers_in_an_expected_value_read_as_words_not_json() -> None:
    expected: JsonValue = {"role": "toolResult", "timestamp": {"$type": "number"}, "details": {"$any": True}, "$$O": [{"$oneOf": [1, 2]}]}
    assert render_expected(expected) == '{"role": "toolResult", "timestamp": <any number>, "details": <any value>, "$O": [<one of [1, 2]>]}'


def test_an_actual_value_that_looks_like_a_matcher_is_shown_as_it_is() -> None:
    divergence = first_divergence({"value": 1}, {"value": {"$type": "number"}})
    assert divergence is not None and divergence.actual == '{"$type": "number"}'


def test_a_divergence_below_a_whole_expected_object_shows_its_matchers_in_words() -> None:
    divergence = first_divergence({"result": {"timestamp": {"$type": "number"}}}, {"result": None})
    assert divergence is not None and divergence.expected == '{"timestamp": <any number>}'


def test_null_identity_is_explained_and_the_text_before_it_is_kept() -> None:
    divergence = explain(Divergence("stream.result.same_object_as", '"terminal_event"', "null"))
    assert str(divergence).startswith('stream.result.same_object_as: expected "terminal_event" but got null (null: the value is none')
    assert "a copy or a new object" in divergence.note


def test_a_thrown_call_and_a_changed_input_are_explained() -> None:

    threw = explain(Divergence("steps[0].threw", '"TypeError"', "null"))
    assert threw.note == "null: the call returned without throwing"
    expected_none = explain(Divergence("steps[0].threw", "null", '"RuntimeError: script exhausted"'))
    assert expected_none.note == "null: the call was expected to return without throwing"
    changed = explain(Divergence("input_unchanged", "true", "false", note="first"))
    assert changed.note == "first; false: the function changed its input in place"


def test_a_clock_reading_where_the_input_timestamp_was_expected_says_so() -> None:
    clock = explain(Divergence("value.timestamp", "10", "1764780000123"))
    assert "clock reading (Date.now())" in clock.note
    assert explain(Divergence("value.timestamp", "10", "30")).note == ""
    assert explain(Divergence("value.timestamp", "any number", '"soon"')).note == ""


def test_an_unknown_key_gets_no_note() -> None:
    plain = Divergence("value.text", '"a"', "null")
    assert explain(plain) is plain
