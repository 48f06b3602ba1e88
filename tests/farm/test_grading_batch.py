"""Grading a class of JavaScript submissions: one batch of 22 generated folders, checked from every side.

The batch (``tests/support/grading_batch.py``) mixes correct copies, every broken variant under
``tests/support/js/variants``, a build that fails, two hanging submissions, a crashing one and an
empty one. It is graded once per session (``tests/support/graded_class.py``, shared with the HTML
tests) with ``grade-batch --jobs 2``, which builds each submission; the tests then read its
gradebook and report folders.
"""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.loading.loader import load_suite
from conformance.model.clauses import load_clauses
from tests.support.cli_runner import cli
from tests.support.graded_class import GradedClass
from tests.support.grading_batch import JS
from tests.support.requirements import needs_node, require

pytestmark = needs_node
LABS = ("3.1", "3.2", "4.1", "4.2")
# Case counts come from the fixtures, so adding a case never breaks these tests; the graded
# cases are those of the rubric's labs (chapter 06 is not graded yet).
CASES = [case for case in load_suite().cases if case.lab in LABS]
TOTAL_CASES = len(CASES)


def lab_points(lab: str, failed: int) -> float:
    """A lab's points under the default rubric (25 each, cases equal) with ``failed`` of its cases failed."""
    size = sum(1 for case in CASES if case.lab == lab)
    return 25 * (size - failed) / size


BUG_NAMED = {
    "textof-tool-names": "textOf lets toolCall blocks in",
    "replay-last-timestamp": "The replayed timestamp is the first system message's",
    "replay-tombstones": "a section deleted with null and set again later goes to the end",
    "error-needs-end": 'the stream does not treat "error" as terminal',
    "result-is-a-copy": "result() resolves with a copy",
    "requests-by-reference": "requests holds the caller's own context object instead of a deep copy",
    "shared-partial": "every event carries the same partial object",
    "exhaustion-throws": "stream() threw because the script has no turn left",
    "abort-checked-early": "an abort issued right after stream() returned was missed",
    "production-not-deferred": "an abort issued right after stream() returned was missed",
    "lab31-only": "dist/src/scripted-model.js not found",
    "lab41-only": "not implemented in lab 4.1",
}


class Batch:
    def __init__(self, graded: GradedClass) -> None:
        self.wall_s = graded.wall_s
        self.root = graded.root
        self.expected = graded.expected
        self.result = graded.result
        with (graded.out / "gradebook.csv").open(encoding="utf-8", newline="") as file:
            self.rows = {row["submission"]: row for row in csv.DictReader(file)}

    def report(self, name: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.root / "out" / "reports" / name / "report.json").read_text(encoding="utf-8"))
        return data


@pytest.fixture(scope="module")
def batch(graded_class: GradedClass) -> Batch:
    return Batch(graded_class)


def test_the_whole_class_grades_in_one_command(batch: Batch) -> None:
    assert len(batch.expected) >= 20
    assert batch.result.returncode == 1, batch.result.stderr[-3000:]  # some submissions are not ok, by design
    assert set(batch.rows) == set(batch.expected), "one row per submission folder, the hidden folder left out"
    assert f"{len(batch.expected)} submissions" in batch.result.stdout
    last = batch.result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"[{len(batch.expected)}/{len(batch.expected)} done, 0 running, ")


def test_every_row_has_the_expected_status_and_loses_points_exactly_in_the_labs_its_bug_touches(batch: Batch) -> None:
    problems = []
    for name, expected in batch.expected.items():
        row = batch.rows[name]
        if row["status"] != expected.status:
            problems.append(f"{name}: status {row['status']} ({row['detail']}), expected {expected.status}")
            continue
        lost = {lab for lab in LABS if float(row[f"lab_{lab}"]) < 25}
        if expected.labs_lost is not None and lost != expected.labs_lost:
            problems.append(f"{name}: points lost in {sorted(lost)}, expected {sorted(expected.labs_lost)}")
        labs_total = sum(float(row[f"lab_{lab}"]) for lab in LABS)
        if abs(labs_total - float(row["total"])) > 0.02 or row["max_total"] != "100.00":
            problems.append(f"{name}: total {row['total']} is not the sum of its labs {labs_total}")
    assert problems == []


def test_correct_submissions_get_full_marks(batch: Batch) -> None:
    for name in (name for name in batch.rows if name.startswith("correct-")):
        assert batch.rows[name]["total"] == "100.00"
        assert batch.rows[name]["cases_passed"] == batch.rows[name]["cases_total"] == str(TOTAL_CASES)


def test_lab31_only_gets_lab_31_credit_only(batch: Batch) -> None:
    row = batch.rows["lab31-only"]
    assert [row[f"lab_{lab}"] for lab in LABS] == ["25.00", "0.00", "0.00", "0.00"]


def test_a_failed_build_gets_a_row_with_the_compiler_error_and_a_build_log(batch: Batch) -> None:
    row = batch.rows["build-fails"]
    assert row["total"] == "0.00"
    assert "error TS2307: Cannot find module './types.js'" in row["detail"]
    assert "error TS2307" in (batch.root / "out" / "reports" / "build-fails" / "build.log").read_text(encoding="utf-8")


def test_hangs_end_in_bounded_time(batch: Batch) -> None:
    """Bounds on hangs, not speed goals (those are in bench/batch_grading.py: the class takes ~40 s at --jobs 2).

    A silent stream ends each wait as soon as the event loop is idle (about a second in all;
    before idle settling it waited out every deadline); the whole class, hangs included,
    ends far inside a bound that only a stuck grader would cross, even on a loaded machine.
    """
    assert float(batch.rows["never-emits"]["duration_s"]) <= 15
    assert batch.wall_s < 180, f"the class took {batch.wall_s:.0f} s at --jobs 2"


def test_a_hang_costs_only_the_cases_that_hang_when_tried_alone(batch: Batch) -> None:
    """No case is scored on a give-up: each failed case hung on its own run, and only those textOf calls hang."""
    cases = [case for case in batch.report("hangs-in-textof")["cases"] if case["lab"] == "3.1"]
    failed = [case for case in cases if case["status"] != "passed"]
    assert failed and all(case["message"].startswith("timed out") for case in failed)
    clauses = load_clauses()
    hanging = {
        case.id
        for case in load_suite(None, clauses).cases
        if case.operation == "text_of" and isinstance(message := case.input.get("message"), dict) and message.get("role") == "assistant"
    }
    assert {case["id"] for case in failed} == hanging


def test_hanging_and_crashing_submissions_say_so_and_keep_their_other_points(batch: Batch) -> None:
    assert "timed out" in batch.rows["hangs-in-textof"]["detail"]
    assert batch.rows["hangs-in-textof"]["lab_4.2"] == "25.00"
    assert "a promise that never settles" in batch.rows["import-never-resolves"]["detail"]
    assert "scripted_model never finishes" in batch.rows["import-never-resolves"]["detail"]
    assert float(batch.rows["import-never-resolves"]["duration_s"]) <= 15  # no case waits for its timeout
    assert "exited with status 3" in batch.rows["crashes-on-import"]["detail"]
    assert batch.rows["crashes-on-import"]["lab_3.1"] == "25.00"
    assert "nothing to grade" in batch.rows["empty-repo"]["detail"]


@pytest.mark.parametrize("name", sorted(BUG_NAMED))
def test_feedback_names_the_bug(batch: Batch, name: str) -> None:
    report = batch.report(name)
    feedback = "\n".join(case["feedback"] for case in report["cases"] if case["status"] != "passed")
    assert BUG_NAMED[name] in feedback


def test_feedback_has_divergence_traces_clause_fixture_and_hint(batch: Batch) -> None:
    cases = {case["id"]: case for case in batch.report("shared-partial")["cases"]}
    feedback = cases["sm-text-three-blocks-partials-not-shared"]["feedback"]
    assert feedback.startswith("steps[") and ".partial.content" in feedback.splitlines()[0]
    assert "  fixture: fixtures/ch04/text-turns.yaml:" in feedback
    assert "events (expected | actual):" in feedback
    marked = [line for line in feedback.splitlines() if line.startswith("    > ")]
    assert len(marked) == 1, feedback
    # The whole clause, not a cut one.
    assert "events observed after the stream has finished still show the partial as it was when they were pushed." in feedback
    assert "  hint:    If an early event's partial already shows blocks played later" in feedback


def test_every_report_folder_has_every_format_and_they_parse(batch: Batch) -> None:
    for name in batch.expected:
        folder = batch.root / "out" / "reports" / name
        root = ET.parse(folder / "junit.xml").getroot()
        assert root.tag == "testsuites" and [suite.get("name") for suite in root] == [f"lab {lab}" for lab in LABS]
        testcases = root.findall("./testsuite/testcase")
        assert int(root.get("tests", -1)) == len(testcases) == TOTAL_CASES
        assert int(root.get("failures", -1)) == len(root.findall("./testsuite/testcase/failure"))
        assert int(root.get("errors", -1)) == len(root.findall("./testsuite/testcase/error"))
        assert int(root.get("skipped", -1)) == len(root.findall("./testsuite/testcase/skipped"))
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        assert results["score"] == pytest.approx(float(batch.rows[name]["total"]), abs=0.01)
        # Where no case ran (the build failed, no project), one "start here" test and one "not run" per lab.
        not_started = batch.rows[name]["status"] in ("build-failed", "not-a-project", "invalid")
        assert len(results["tests"]) == (1 + len(LABS) if not_started else TOTAL_CASES)
        assert all(test["status"] in ("passed", "failed") and test["visibility"] == "visible" for test in results["tests"])
        assert (folder / "report.md").read_text(encoding="utf-8").startswith(f"# pi-conformance grade: {name}")


def test_grade_prints_a_summary_with_the_hint_for_one_student() -> None:
    result = cli("grade", "--impl", f"pi-course:{JS / 'variants' / 'exhaustion-throws'}", "--details", "1")
    assert result.returncode == 0, result.stderr
    # exhaustion-throws fails 15 cases of lab 4.2 (tests/support/js/variants.json).
    lab42 = lab_points("4.2", 15)
    assert f"lab 4.2   {lab42:.2f} / 25.00" in result.stdout
    assert f"total     {75 + lab42:.2f} / 100.00" in result.stdout
    assert "hint:    If threw shows an error, stream() threw because the script has no turn left" in result.stdout


def test_shards_merge_back_into_one_gradebook(tmp_path: Path) -> None:
    require("needs_bwrap")  # --jobs 2 without a sandbox is refused
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for name, target in (("ann", "course-correct"), ("ben", "variants/textof-tool-names"), ("cat", "variants/lab31-only")):
        (submissions / name).symlink_to(JS / target, target_is_directory=True)
    gradebooks = []
    for index in (1, 2):
        out = tmp_path / f"shard{index}"
        # --no-build: the graded class builds every submission already; this is about sharding.
        result = cli("grade-batch", str(submissions), "--shard", f"{index}/2", "--jobs", "2", "--no-build", "--out", str(out))
        assert result.returncode == 0, result.stderr
        gradebooks.append(str(out / "gradebook.csv"))
    merged = tmp_path / "gradebook.csv"
    assert cli("gradebook-merge", *gradebooks, "-o", str(merged)).returncode == 0
    rows = list(csv.DictReader(merged.open(encoding="utf-8")))
    ben = f"{75 + lab_points('3.1', 9):.2f}"  # textof-tool-names fails 9 cases of lab 3.1
    assert [(row["submission"], row["total"]) for row in rows] == [("ann", "100.00"), ("ben", ben), ("cat", "25.00")]
    overlap = cli("gradebook-merge", gradebooks[0], gradebooks[0], "-o", str(tmp_path / "x.csv"))
    assert overlap.returncode == 2 and "graded more than once" in overlap.stderr
