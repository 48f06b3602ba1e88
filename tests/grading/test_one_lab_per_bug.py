"""`fixtures check`: a case that moves a one-bug variant's points into another lab is named, with the bug, the lab and why.

Issue 38: an author whose valid new case made a lab 4.1 bug also cost lab 4.2 points learnt it
from a Python test's message. The check says it in the fixture's terms; here a copy of a lab 4.1
case, filed in lab 4.2 under a lab 4.2 clause, is the new case.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance import cli
from conformance.commands.fixtures_check import DEFAULT_VARIANTS, BugVariant, check, load_variants, misplaced_points
from conformance.loading.loader import load_suite
from tests.support.fixture_scratch import extract
from tests.support.paths import REPO
from tests.support.requirements import costly

BUG = "partials-shared-between-events"
COPIED = "sm-text-three-blocks-partials-not-shared"
NEW_ID = "sm-exhaust-partials-copied-into-lab-42"


def _variant() -> BugVariant:
    return next(variant for variant in load_variants(DEFAULT_VARIANTS[0]) if variant.name == BUG)


def _tree_with_a_moving_case(tmp_path: Path, clauses: str) -> Path:
    root = tmp_path / "fixtures"
    shutil.copytree(REPO / "fixtures", root)
    text = extract("ch04/text-turns.yaml", [COPIED])
    text = text.replace(f"id: {COPIED}", f"id: {NEW_ID}").replace('lab: "4.1"', 'lab: "4.2"')
    text = "\n".join(f"    clauses: {clauses}" if line.startswith("    clauses:") else line for line in text.split("\n"))
    (root / "ch04" / "zz-moved.yaml").write_text(text, encoding="utf-8")
    return root


@costly
def test_the_bundled_cases_keep_every_bug_in_its_own_lab() -> None:
    assert check() == []


def test_a_case_that_moves_a_bugs_points_is_named_with_the_bug_the_lab_and_why(tmp_path: Path) -> None:
    root = _tree_with_a_moving_case(tmp_path, "[SM-EXHAUST-1]")
    [problem] = misplaced_points(_variant(), root)
    assert (problem.file, problem.case_id) == ("fixtures/ch04/zz-moved.yaml", NEW_ID)
    assert f"moves points of the lab 4.1 bug '{BUG}'" in problem.message and "into lab 4.2" in problem.message
    assert "it cites none of the clauses they cite" in problem.message
    suggested = problem.message.split("(those failing the same way cite ", 1)[1].split(")", 1)[0].split(", ")
    # Clauses the bug's own lab 4.1 failures cite: citing one lets grading charge the failure there.
    lab_41 = {clause for case in load_suite().cases if case.lab == "4.1" for clause in case.clauses}
    assert suggested and set(suggested) <= lab_41
    assert "One lab per bug" in problem.message


def test_citing_the_bugs_clause_lets_grading_charge_it_where_it_belongs(tmp_path: Path) -> None:
    root = _tree_with_a_moving_case(tmp_path, "[SM-EXHAUST-1, SM-PLAY-3]")
    assert misplaced_points(_variant(), root) == []


@costly
def test_the_command_prints_the_problem_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree_with_a_moving_case(tmp_path, "[SM-EXHAUST-1]")
    code = cli.main(["fixtures", "check", "--fixtures", str(root)])
    out, err = capsys.readouterr()
    assert code == 1
    assert f": {NEW_ID}: moves points of the lab 4.1 bug '{BUG}'" in out
    assert "fixtures check: " in err and "problem" in err
