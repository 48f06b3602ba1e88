"""One bad submission is one row of ``grade-batch``, never the end of the batch (issue 32).

On main before the fix, a submission folder whose name is not UTF-8 stopped the batch
before anyone was graded (``UnicodeEncodeError`` writing ``gradebook.meta.json``: no
gradebook at all), and a 1,500-level tree crashed that submission's grading.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.support.attack_projects import copy_project
from tests.support.bad_trees import UNDECODABLE_TEXT, deep_copy, scratch_fixture, undecodable_copy
from tests.support.cli_runner import cli
from tests.support.requirements import needs_node, needs_npm, needs_toolchain

pytestmark = [needs_node, needs_npm, needs_toolchain]
_scratch = scratch_fixture()


def test_an_undecodable_name_and_a_deep_tree_are_one_row_each_and_everyone_else_is_graded(scratch: Path) -> None:
    submissions = scratch / "submissions"
    submissions.mkdir()
    copy_project(submissions / "fine")
    undecodable_copy(submissions)
    deep_copy(submissions / "deep")
    out = scratch / "out"
    result = cli("grade-batch", str(submissions), "--out", str(out), "--sandbox", "none", "--jobs", "1", timeout=600)
    assert "Traceback" not in result.stderr, result.stderr
    rows = {row["submission"]: row for row in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    assert sorted(rows) == sorted(["deep", "fine", UNDECODABLE_TEXT])
    assert rows["fine"]["total"] == "100.00"
    assert rows[UNDECODABLE_TEXT]["total"] == "100.00"  # its name is escaped, its code graded like any other
    assert rows["deep"]["status"] == "build-failed" and "folders nested more than" in rows["deep"]["detail"]
    meta = json.loads((out / "gradebook.meta.json").read_text(encoding="utf-8"))
    assert meta["complete"] and UNDECODABLE_TEXT in meta["submissions"]
    report = json.loads((out / "reports" / UNDECODABLE_TEXT / "report.json").read_text(encoding="utf-8"))
    assert report["status"] == "ok"
    assert f"{UNDECODABLE_TEXT}: 100.00/100.00 ok" in result.stderr  # the progress line
    assert f"{UNDECODABLE_TEXT}".encode() in (out / "gradebook.csv").read_bytes()


def test_two_folders_that_escape_to_one_name_are_refused_before_grading(scratch: Path) -> None:
    submissions = scratch / "submissions"
    undecodable_copy(submissions)
    (submissions / UNDECODABLE_TEXT).mkdir()  # the escaped name, written out as text
    result = cli("grade-batch", str(submissions), "--out", str(scratch / "out"), "--sandbox", "none", timeout=120)
    assert result.returncode == 2
    assert f"two submission folders go by the same name once undecodable bytes are escaped: {UNDECODABLE_TEXT}" in result.stderr
