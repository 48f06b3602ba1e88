"""Input features (pi-ai-1): a class of inputs a port's types cannot hold is one feature to opt out of.

The loader gives each case the classes its input holds, anywhere (conformance/model/input_features.py).
Checked against a port that really cannot hold them: the Python port of pi-ai-1 behind a
``to_impl`` that refuses every system-role message and every ``"pending"`` stop reason, at any
depth, skips exactly the cases that carry the features; opting out of them instead leaves no
case to refuse.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from conformance.adapters.pi_ai_binding import PiAiBindingAdapter
from conformance.adapters.port_calls import InputNotHeld
from conformance.common.jsontypes import JsonValue
from conformance.loading.loader import load_suite
from conformance.model.input_features import PI_AI_1_INPUT_FEATURES, input_features
from conformance.model.profiles import PI_AI_1
from conformance.running.engine import run_alone
from examples import pi_ai_port

CLASSES = {feature.name: feature for feature in PI_AI_1_INPUT_FEATURES}


def refusing(names: set[str]) -> Any:
    """A ``to_impl`` whose port has no type for the classes ``names``: it refuses a value holding one anywhere."""

    def to_impl(value: Any) -> Any:
        held = set(input_features(tuple(CLASSES[name] for name in names), value))
        if held:
            raise InputNotHeld(f"my types hold no {', '.join(sorted(held))}")
        return value

    return to_impl


def adapter(names: set[str], unclaimed: tuple[str, ...] = ()) -> PiAiBindingAdapter:
    names_of_port = {name: getattr(pi_ai_port, name) for name in dir(pi_ai_port) if not name.startswith("__")}
    built = PiAiBindingAdapter(SimpleNamespace(**names_of_port, to_impl=refusing(names), to_json=lambda value: value), name="narrow")
    built.unclaimed_features = unclaimed
    return built


def test_input_features_find_the_class_at_any_depth() -> None:
    deep: JsonValue = {"steps": [{"context": {"messages": [{"role": "user"}, {"role": "system", "content": "x"}]}}]}
    assert input_features(PI_AI_1_INPUT_FEATURES, deep) == ("system-messages",)
    assert input_features(PI_AI_1_INPUT_FEATURES, {"partial": {"stopReason": "pending"}}) == ("pending-stop-reason",)
    assert input_features(PI_AI_1_INPUT_FEATURES, {"role": "user", "stopReason": "stop"}, []) == ()
    assert {"system-messages", "pending-stop-reason"} <= set(PI_AI_1.opt_outs)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_a_feature_marks_exactly_the_cases_a_port_without_the_type_refuses(name: str) -> None:
    cases = load_suite(profile=PI_AI_1.name).cases
    marked = {case.id for case in cases if name in case.features}
    narrow = adapter({name})
    refused = {case.id for case in cases if run_alone(narrow, case).status == "skipped"}
    assert marked and refused == marked, (sorted(marked - refused), sorted(refused - marked))


def test_opting_out_of_the_features_leaves_nothing_to_refuse() -> None:
    narrow = adapter(set(CLASSES), unclaimed=tuple(CLASSES))
    outcomes = [run_alone(narrow, case) for case in load_suite(profile=PI_AI_1.name).cases]
    assert {outcome.status for outcome in outcomes} == {"passed", "skipped"}
    assert {outcome.message for outcome in outcomes if outcome.status == "skipped"} == {f"feature {name} not claimed" for name in CLASSES}
