"""A planted failure buys nothing (issue 32, item 5): the same code scores the same with and without it.

``tests/support/planted_evidence.py``: real code with one lab 4.2 bug, and cheats that add one
deliberate lab 4.1 failure with the same symptom, on the first call of each adapter or for a
recognised public script. Before symptoms had homes (symptom_homes.py) each scored 99.57 against
the real code's 94.57.
"""

from __future__ import annotations

import pytest

from conformance.grading.attribution import symptoms
from conformance.grading.grader import GradingContext, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.grading.scoring import Score
from tests.support.held_out_set import write_held_out
from tests.support.paths import REPO
from tests.support.planted_evidence import CHEATS


def _score(context: GradingContext, name: str) -> Score:
    result = grade_submission(f"python:tests.support.planted_evidence:{name.replace('-', '_')}", context, name=name)
    assert result.status == "ok", result.detail
    return result.score


@pytest.fixture(scope="module")
def contexts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, GradingContext]:
    private = tmp_path_factory.mktemp("private")
    write_held_out(private, count=8, source=REPO / "fixtures" / "ch04" / "error-turns.yaml")
    return {"public": prepare(load_rubric()), "with a private set": prepare(load_rubric(), held_out=private)}


# Within one chapter a symptom's site is charged where it costs most (conformance/grading/symptom_homes.py):
# lab 4.2's real failures cost more than one planted lab 4.1 case, so they stay charged in lab 4.2.
@pytest.mark.parametrize("where", ["public", "with a private set"])
@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_a_planted_lab_4_1_failure_earns_nothing(contexts: dict[str, GradingContext], where: str, cheat: str) -> None:
    context = contexts[where]
    real, planted = _score(context, "real"), _score(context, cheat)
    # The plant is there: one lab 4.1 case fails, with the symptom of lab 4.2's real failures.
    lab_41 = [graded for graded in planted.cases if graded.case.lab == "4.1" and not graded.passed]
    assert len(lab_41) == 1 and real.lab("4.1").points == 25  # type: ignore[union-attr]
    assert planted.points <= real.points + 1e-9
    # Lab 4.2 scores as it does without the plant: the plant excuses none of its failures.
    assert all(graded.inherited is None for graded in planted.cases if graded.case.lab == "4.2")
    assert planted.lab("4.2").points == pytest.approx(real.lab("4.2").points, abs=1e-9)  # type: ignore[union-attr]
    if where != "public":
        return
    plant = lab_41[0]
    real_symptoms = {s for graded in real.cases if not graded.passed for s in symptoms(graded.case, graded.outcome.observation)}
    if symptoms(plant.case, plant.outcome.observation) <= real_symptoms:
        # Nothing but the real bug's symptoms: the same bug, charged once, in lab 4.2; the plant's cost is refunded exactly.
        assert plant.inherited is not None and plant.inherited.lab == "4.2"
        assert planted.points == pytest.approx(real.points, abs=1e-9)
    else:
        # It breaks more than the real code does (recognised-script: later events too): that is charged, as any own failure.
        assert plant.inherited is None
        assert planted.points == pytest.approx(real.points - plant.max_points, abs=1e-9)


def test_both_kinds_of_plant_are_drilled(contexts: dict[str, GradingContext]) -> None:
    """One cheat's plant shows only the real bug's symptom (refunded), the other's more (charged): both branches above run."""
    refunded = set()
    for cheat in CHEATS:
        planted = _score(contexts["public"], cheat)
        plant = next(graded for graded in planted.cases if graded.case.lab == "4.1" and not graded.passed)
        refunded.add(plant.inherited is not None)
    assert refunded == {True, False}
