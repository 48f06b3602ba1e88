"""Where an observation departs from a case's expectations: the first divergence, or every one.

The walk is judging's, not running's: the engine judges a fresh observation with :func:`compare`,
and grouping reads a recorded one again with :func:`all_divergences` to see every symptom of a
case (:mod:`conformance.judging.shared_symptoms`).
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.judging.glossary import explain
from conformance.judging.matcher import MISSING, Observed, first_divergence, iter_divergences
from conformance.judging.outcome import Divergence
from conformance.model.cases import Case


def compare(case: Case, observation: JsonObject) -> tuple[Divergence | None, int | None]:
    """The first divergence between the case's expectations and the observation."""
    if _step_count_differs(case, observation):
        return _step_count_divergence(case, observation), None
    for expected, actual, path, step_index in _expectations(case, observation):
        divergence = first_divergence(expected, actual, path)
        if divergence is not None:
            return explain(divergence), step_index
    return None, None


def all_divergences(case: Case, observation: JsonObject) -> list[Divergence]:
    """Every divergence between the case's expectations and the observation, in document order."""
    if _step_count_differs(case, observation):
        return [_step_count_divergence(case, observation)]
    return [
        explain(divergence)
        for expected, actual, path, _ in _expectations(case, observation)
        for divergence in iter_divergences(expected, actual, path)
    ]


def _step_count_differs(case: Case, observation: JsonObject) -> bool:
    observed_steps = observation.get("steps")
    return case.is_scenario and (not isinstance(observed_steps, list) or len(observed_steps) != len(case.steps))


def _step_count_divergence(case: Case, observation: JsonObject) -> Divergence:
    observed_steps = observation.get("steps")
    count = len(observed_steps) if isinstance(observed_steps, list) else "no"
    return Divergence("steps", f"{len(case.steps)} step observations", f"{count}", "the adapter must report every step")


def _expectations(case: Case, observation: JsonObject) -> Iterator[tuple[JsonValue, Observed, str, int | None]]:
    """Each expected value with what was observed there, its path and its step index, in document order."""
    if not case.is_scenario:
        for key, expected in (case.expect or {}).items():
            yield expected, observation.get(key, MISSING), key, None
        return
    observed_steps = observation.get("steps")
    assert isinstance(observed_steps, list)  # _step_count_differs checked it
    for index, (step, observed) in enumerate(zip(case.steps, observed_steps, strict=True)):
        expected_step = step.get("expect")
        if not isinstance(expected_step, dict):
            continue
        observed_object: dict[str, JsonValue] = observed if isinstance(observed, dict) else {}
        for key, expected in expected_step.items():
            yield expected, observed_object.get(key, MISSING), f"steps[{index}].{key}", index
