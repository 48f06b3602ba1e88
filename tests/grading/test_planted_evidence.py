"""A planted failure buys nothing (issue 32, item 5): the same code scores the same with and without it.

``tests/support/planted_evidence.py``: real code with one lab 4.2 bug, and cheats that add one
deliberate lab 4.1 failure with the same symptom, on the first call of each adapter or for a
recognised public script. On main each scored 99.57 against the real code's 94.57.
"""

from __future__ import annotations

import pytest

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


# Open (issue 32, item 5): without a refund cap, which made a real lab 3.2 bug cost lab 4 points
# again, a plant that shares a clause and the symptom still excuses the real lab 4.2 failures.
# Strict: the day evidence must be consistent (or lab 4 runs over the reference stream), it passes.
@pytest.mark.xfail(strict=True, reason="a planted lab 4.1 failure still launders lab 4.2's (issue 32, item 5)")
@pytest.mark.parametrize("where", ["public", "with a private set"])
@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_a_planted_lab_4_1_failure_earns_nothing(contexts: dict[str, GradingContext], where: str, cheat: str) -> None:
    context = contexts[where]
    real, planted = _score(context, "real"), _score(context, cheat)
    # The plant is there: one lab 4.1 case fails, with the symptom of lab 4.2's real failures.
    lab_41 = [graded for graded in planted.cases if graded.case.lab == "4.1" and not graded.passed]
    assert len(lab_41) == 1 and real.lab("4.1").points == 25  # type: ignore[union-attr]
    assert planted.points <= real.points + 1e-9
    if where == "public":  # the plant's cost is refunded exactly, never more
        assert planted.points == pytest.approx(real.points, abs=1e-9)
