"""``--held-out DIR``: a private set of cases graded beside the public ones, every one held out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.gradescope import results as gradescope
from conformance.grading.grader import grade_submission, prepare
from conformance.grading.rubric import RubricError, load_rubric, parse_rubric
from tests.support.cli_runner import cli
from tests.support.held_out_set import write_held_out

TEXTOF_BUG = "python:tests.support.variants:textof_mixes_in_tool_names"


def test_held_out_cases_join_their_lab_and_are_all_held_out(tmp_path: Path) -> None:
    ids = write_held_out(tmp_path / "private")
    public = prepare(load_rubric())
    context = prepare(load_rubric(), held_out=tmp_path / "private")
    assert len(context.cases) == len(public.cases) + len(ids)
    assert context.rubric.held_out >= set(ids)
    assert {case.lab for case in context.cases if case.id in ids} == {"3.1"}
    result = grade_submission(TEXTOF_BUG, context)
    data = json.loads(gradescope.render(result, context.clauses))
    visibility = {test["name"]: test["visibility"] for test in data["tests"]}
    assert {visibility[case_id] for case_id in ids} == {"after_published"}
    assert all(visibility[case.id] == "visible" for case in public.cases)
    # The lab's points are shared with the held-out cases: a failing one costs points.
    failing = [test for test in data["tests"] if test["name"] in ids and test["status"] == "failed"]
    assert failing and all(test["max_score"] > 0 for test in failing)
    assert not any(case_id in data["output"] for case_id in ids)


def test_held_out_ids_must_not_clash_with_public_ones(tmp_path: Path) -> None:
    ids = write_held_out(tmp_path / "private", rename=False)
    with pytest.raises(RubricError, match="also a public case") as raised:
        prepare(load_rubric(), held_out=tmp_path / "private")
    assert ids[0] in str(raised.value)


def test_held_out_folder_must_hold_cases(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(RubricError, match="holds no case"):
        prepare(load_rubric(), held_out=tmp_path / "empty")
    with pytest.raises(RubricError, match="is not a folder"):
        prepare(load_rubric(), held_out=tmp_path / "missing")


def test_held_out_cases_of_labs_the_rubric_leaves_out_are_not_graded(tmp_path: Path) -> None:
    write_held_out(tmp_path / "private")
    rubric = parse_rubric({"version": 1, "name": "4.1 only", "labs": {"4.1": {"weight": 10}}})
    context = prepare(rubric, held_out=tmp_path / "private")
    assert {case.lab for case in context.cases} == {"4.1"}


def test_grade_and_grade_batch_take_held_out(tmp_path: Path) -> None:
    ids = write_held_out(tmp_path / "private")
    results = tmp_path / "results.json"
    graded = cli("grade", "--impl", TEXTOF_BUG, "--trust-python", "--held-out", str(tmp_path / "private"), "--gradescope", str(results))
    assert graded.returncode == 0, graded.stderr
    names = {test["name"]: test for test in json.loads(results.read_text())["tests"]}
    assert all(names[case_id]["visibility"] == "after_published" for case_id in ids)
    assert "; 2 of them held out)" in graded.stdout  # staff see which failures are held out (the third passes)

    write_held_out(tmp_path / "clashing", rename=False)
    refused = cli("grade", "--held-out", str(tmp_path / "clashing"))
    assert refused.returncode == 2 and "also a public case" in refused.stderr

    (tmp_path / "class" / "reference_impl").mkdir(parents=True)  # python:{name} imports the reference
    batch = cli(
        "grade-batch",
        str(tmp_path / "class"),
        "--impl-template",
        "python:{name}",
        "--trust-python",
        "--held-out",
        str(tmp_path / "private"),
        "--out",
        str(tmp_path / "grades"),
    )
    assert batch.returncode == 0, batch.stderr
    report = json.loads((tmp_path / "grades" / "reports" / "reference_impl" / "results.json").read_text())
    held = [test for test in report["tests"] if test["name"] in ids]
    assert len(held) == len(ids) and all(test["visibility"] == "after_published" and test["status"] == "passed" for test in held)
