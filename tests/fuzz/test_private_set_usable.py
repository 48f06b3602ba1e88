"""Every generated private set is usable (issue 32, item 6): it lints clean and ``grade --held-out`` takes it.

``private-set --seed 4242`` drew a tool argument ``$O``; written as it was observed, the key read
as a misspelt matcher and ``grade --held-out`` refused the whole set, and a lab with a lone case
of another id prefix failed ``fixtures lint``. Keys that start with ``$`` are now written as
literals (``$$O``, fixture-format.md, Matching), and each id prefix of a lab gets its own file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.authoring.lint import lint
from conformance.grading.grader import grade_submission, prepare
from conformance.grading.rubric import load_rubric
from tests.support.private_sets import write_private_set
from tests.support.requirements import costly

#: 4242 drew the ``$O`` key and the lone ``sm-abort-`` case; the others are any seeds.
SEEDS = ("4242", "7", "staff only: another seed")


@costly
@pytest.mark.parametrize("seed", SEEDS)
def test_a_generated_set_lints_clean_and_the_reference_passes_it_as_a_held_out_set(tmp_path: Path, seed: str) -> None:
    out = write_private_set(seed, tmp_path / "private")
    if seed == "4242":  # the drill has teeth: this seed draws the key $O, written as its literal
        assert "$$O" in "".join(path.read_text(encoding="utf-8") for path in out.rglob("*.yaml"))
    assert [problem.message for problem in lint(out, extra=True)] == []
    context = prepare(load_rubric(), held_out=out)  # refuses a set it cannot load
    result = grade_submission("python:reference_impl", context)
    held = [graded for graded in result.score.cases if graded.held_out]
    assert len(held) == 100 and all(graded.passed for graded in held)
