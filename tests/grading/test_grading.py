"""Grading without Node.js: rubric, scoring, status, report formats, baselines, shards and merge."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from conformance.farm.gradebook import GradebookError, GradebookMeta, columns, merge_gradebooks, read_gradebook, write_gradebook
from conformance.farm.progress import Progress
from conformance.farm.shard import ShardError, parse_shard, select_shard
from conformance.gradescope import results as gradescope
from conformance.grading.baseline import BaselineError, Verdict, baseline_document, compare, load_baseline, parse_baseline, write_baseline
from conformance.grading.grader import GradeOptions, GradingContext, SubmissionResult, build_summary, grade_submission, prepare
from conformance.grading.rubric import RubricError, load_rubric, parse_rubric, tag_matches
from conformance.grading.scoring import score
from conformance.grading.status import classify
from conformance.judging.failure_groups import cause_of
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from conformance.reports.formats import json_report, junit, markdown, terminal
from tests.support.cli_runner import cli
from tests.support.paths import REPO

TEXTOF_BUG = "python:tests.support.variants:textof_mixes_in_tool_names"


def rubric_data(**labs: object) -> dict[str, object]:
    return {"version": 1, "name": "test", "labs": labs or {"3.1": {"weight": 10}}}


def case(case_id: str, lab: str = "3.1", clauses: tuple[str, ...] = ("IR-TEXT-1",)) -> Case:
    return Case(case_id, "scratch.yaml", 1, "03", lab, clauses, "scratch", "text_of", {})


def outcome(case_id: str, status: str, message: str = "", timed_out: bool = False) -> Outcome:
    return Outcome(case_id, status, message, 0.01, timed_out=timed_out)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def lab31_context() -> GradingContext:
    return prepare(parse_rubric(rubric_data(**{"3.1": {"weight": 40}}), "lab 3.1 only"))


@pytest.fixture(scope="module")
def textof_result(lab31_context: GradingContext) -> SubmissionResult:
    return grade_submission(TEXTOF_BUG, lab31_context, name="textof-bug")


# -- rubric ------------------------------------------------------------------------------


def test_the_default_rubric_is_valid_and_fits_the_fixtures(suite: Suite) -> None:
    rubric = load_rubric()
    assert ",".join(rubric.labs) == "3.1,3.2,4.1,4.2,5.1,5.2,5.3,6.1,6.2,6.3,7.1,7.2,7.3,7.4,7.5,9.1,9.2,9.3,9.4,9.5"
    # 100 for a repository at chapter 04 (later labs are left out for it: test_chapter_scope.py), 175 at chapter 05,
    # 250 at chapter 06, 375 at chapter 07, 500 at chapter 09 (lab 9.1, the reducer, and labs 9.2-9.5, the Agent).
    assert rubric.max_score == 500
    assert rubric.check_against(suite.cases, load_clauses()) == []


def test_a_rubric_that_breaks_its_schema_is_refused_with_the_path() -> None:
    with pytest.raises(RubricError) as error:
        parse_rubric({"version": 1, "labs": {"3.1": {"weight": -1}, "5.1": {"weight": 3}}}, "bad.yaml")
    assert "bad.yaml: not a valid rubric" in str(error.value)
    assert "labs.3.1.weight" in str(error.value)
    with pytest.raises(RubricError, match="tags"):
        parse_rubric(rubric_data(**{"3.1": {"weight": 1, "scoring": "by-tag"}}))


def test_unquoted_lab_keys_are_read_as_labs(tmp_path: Path) -> None:
    path = tmp_path / "rubric.yaml"
    path.write_text("version: 1\nlabs:\n  3.1: {weight: 5}\n  4.2: {weight: 5}\n", encoding="utf-8")
    assert list(load_rubric(path).labs) == ["3.1", "4.2"]


def test_tags_match_ids_and_prefixes_at_dash_boundaries() -> None:
    assert tag_matches("SM-ABORT", "SM-ABORT-1") and tag_matches("SM-ABORT-1", "SM-ABORT-1")
    assert not tag_matches("SM-ABORT-1", "SM-ABORT-12") and not tag_matches("SM-AB", "SM-ABORT-1")
    assert tag_matches("sm-abort", "sm-abort-right-after-stream-returns")


def test_held_out_ids_and_tags_must_name_something(suite: Suite) -> None:
    rubric = parse_rubric(
        rubric_data(**{"3.1": {"weight": 1, "scoring": "by-tag", "tags": {"NO-SUCH": 2}}}) | {"held_out": ["no-such-case"]}
    )
    problems = rubric.check_against(suite.cases, load_clauses())
    assert any("held_out" in problem and "no-such-case" in problem for problem in problems)
    assert any("labs.3.1.tags.NO-SUCH" in problem for problem in problems)
    with pytest.raises(RubricError, match="does not fit the fixtures"):
        prepare(rubric)


# -- scoring -----------------------------------------------------------------------------


def test_score_is_lab_weight_times_the_passed_share_of_case_weight() -> None:
    rubric = parse_rubric(
        rubric_data(
            **{
                "3.1": {"weight": 30, "scoring": "by-tag", "tags": {"IR-TEXT": 3, "IR-TEXT-2": 1, "skip-me": 0}, "default_weight": 2},
                "4.2": {"weight": 70},
            }
        )
    )
    cases = [
        case("a", clauses=("IR-TEXT-1",)),  # weight 3
        case("b", clauses=("IR-TEXT-2",)),  # both tags match: the larger, 3
        case("c", clauses=("SYS-REPLAY-1",)),  # default 2
        case("skip-me-please", clauses=("SYS-REPLAY-1",)),  # 0
        case("d", lab="4.2"),
        case("e", lab="4.2"),
    ]
    statuses = {"a": "passed", "b": "failed", "c": "passed", "skip-me-please": "failed", "d": "skipped", "e": "passed"}
    result = score(rubric, [(c, outcome(c.id, statuses[c.id])) for c in cases])
    by_id = {graded.case.id: graded for graded in result.cases}
    assert [by_id[name].weight for name in ("a", "b", "c", "skip-me-please")] == [3, 3, 2, 0]
    assert result.lab("3.1").points == pytest.approx(30 * 5 / 8)  # type: ignore[union-attr]
    assert result.lab("4.2").points == pytest.approx(35)  # type: ignore[union-attr]
    assert result.points == pytest.approx(30 * 5 / 8 + 35) and result.max_points == 100
    assert sum(graded.points for graded in result.cases) == pytest.approx(result.points)
    assert sum(graded.max_points for graded in result.cases) == pytest.approx(100)


def test_skipped_errored_and_failed_earn_nothing_and_full_marks_are_exact() -> None:
    rubric = parse_rubric(rubric_data(**{"3.1": {"weight": 25}}))
    cases = [case(f"c{index}") for index in range(108)]
    assert score(rubric, [(c, outcome(c.id, "passed")) for c in cases]).points == 25
    for status in ("failed", "errored", "skipped"):
        result = score(rubric, [(c, outcome(c.id, status if c.id == "c0" else "passed")) for c in cases])
        assert result.points == pytest.approx(25 * 107 / 108)


def test_the_reference_gets_full_marks_with_the_default_rubric(suite: Suite) -> None:
    rubric = load_rubric()
    result = grade_submission("reference", prepare(rubric))
    # Every lab of the rubric, chapters 05-09 too: the reference says nothing about chapters (only pi-course: does).
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 500, 500)
    # Every lab of the fixtures is in the rubric.
    assert {case.lab for case in suite.cases} == set(rubric.labs)
    assert result.score.total == len([case for case in suite.cases if case.lab in rubric.labs]) and result.chapter == ""


# -- status ------------------------------------------------------------------------------


def test_status_says_what_happened() -> None:
    assert classify([outcome("a", "passed"), outcome("b", "failed", "value: x")]) == ("ok", "")
    status, detail = classify([outcome("a", "failed", "timed out: text_of did not return within 1 s", timed_out=True)])
    assert status == "timed-out" and "a: timed out" in detail
    # A message that merely mentions a timeout is not a hang.
    assert classify([outcome("a", "failed", 'value: expected "timed out" but got ""')])[0] == "ok"
    status, detail = classify([outcome("a", "errored", "could not observe the implementation: x exited with status 3")])
    assert status == "crashed" and "exited with status 3" in detail
    assert classify([outcome("a", "skipped", "not implemented")])[0] == "no-cases"
    assert classify([outcome("a", "passed")], budget_exhausted=True)[0] == "timed-out"


def test_a_used_up_budget_stops_the_submission(lab31_context: GradingContext) -> None:
    result = grade_submission("reference", lab31_context, GradeOptions(budget_s=1e-9))
    assert result.status == "timed-out"
    assert result.score.points == 0
    assert all("budget" in graded.outcome.message for graded in result.score.cases)


def test_an_implementation_that_cannot_start_is_invalid(lab31_context: GradingContext) -> None:
    result = grade_submission("python:no_such_module_anywhere", lab31_context)
    assert result.status == "invalid" and "no_such_module_anywhere" in result.detail
    assert result.score.points == 0


def test_a_build_failure_is_summed_up_by_its_first_compiler_error() -> None:
    report = (
        "npm run build exited with status 2:\n> pi@1 build\n> tsc\n\nsrc/a.ts(1,2): error TS2304: Cannot find name 'x'.\nnpm error code 2"
    )
    assert build_summary(report) == "npm run build exited with status 2: src/a.ts(1,2): error TS2304: Cannot find name 'x'."


# -- report formats ----------------------------------------------------------------------


def test_junit_xml_escapes_the_control_characters_a_student_printed(textof_result: SubmissionResult) -> None:
    # XML 1.0 cannot carry them: a colour code or a NUL in a message must not make the report unreadable.
    first, *rest = textof_result.score.cases
    noisy = dataclasses.replace(first.outcome, status="failed", message="\x1b[31mred\x00\x0b\tend\r\nnext\x7f")
    result = dataclasses.replace(
        textof_result, score=dataclasses.replace(textof_result.score, cases=(dataclasses.replace(first, outcome=noisy), *rest))
    )
    failure = ET.fromstring(junit.render(result, load_clauses())).find(f".//testcase[@name='{first.case.id}']/failure")
    assert failure is not None
    assert failure.get("message", "").startswith("\\x1b[31mred\\x00")
    assert "\\x1b[31mred\\x00\\x0b\tend\n" in (failure.text or "") and "next\x7f" in (failure.text or "")


def test_terminal_summary_lists_failing_cases_by_lab_with_feedback(textof_result: SubmissionResult) -> None:
    text = terminal.render(textof_result, load_clauses())
    assert "lab 3.1" in text and "/ 40.00" in text and "status   ok" in text
    # One bug, one line: its lab, its count, one example's divergence and the first case ids.
    listed = re.search(r"failing cases: (\d+) in 1 cause, one line each\n  lab 3\.1  (\d+) cases: value: expected .* but got .*read", text)
    assert listed is not None and listed[1] == listed[2] == str(sum(not graded.passed for graded in textof_result.score.cases))
    assert "fixture: fixtures/ch03/text-of.yaml:" in text
    # The clause is quoted whole, not cut as in pytest's output.
    assert "Tool-call blocks contribute nothing: not their name, id, arguments or raw arguments." in text
    assert "hint:    If value shows a tool name such as read" in text


def test_junit_xml_has_the_standard_structure_and_counts(textof_result: SubmissionResult) -> None:
    root = ET.fromstring(junit.render(textof_result, load_clauses()))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [suite.get("name") for suite in suites] == ["lab 3.1"]
    for suite in suites:
        testcases = suite.findall("testcase")
        assert int(suite.get("tests", -1)) == len(testcases)
        assert int(suite.get("failures", -1)) == sum(tc.find("failure") is not None for tc in testcases)
        assert int(suite.get("errors", -1)) == sum(tc.find("error") is not None for tc in testcases)
        assert int(suite.get("skipped", -1)) == sum(tc.find("skipped") is not None for tc in testcases)
        assert all(
            tc.get("name") and tc.get("classname") == "pi-conformance.lab_3_1" and float(tc.get("time", "x")) >= 0 for tc in testcases
        )
    assert int(root.get("tests", -1)) == textof_result.score.total
    failure = root.find(".//testcase[@name='text-of-fault-experiment-tool-name-excluded']/failure")
    assert failure is not None and failure.get("type") == "failed"
    assert failure.get("message", "").startswith("value: expected")
    assert "clause:  IR-TEXT-1" in (failure.text or "")


def test_gradescope_results_have_the_documented_fields(suite: Suite) -> None:
    held = "text-of-fault-experiment-tool-name-excluded"
    context = prepare(parse_rubric(rubric_data(**{"3.1": {"weight": 40}}) | {"held_out": [held]}))
    result = grade_submission(TEXTOF_BUG, context)
    data = json.loads(gradescope.render(result, context.clauses))
    assert data["score"] == pytest.approx(result.score.points, abs=1e-3)
    assert data["extra_data"]["max_score"] == 40
    assert held not in data["output"]
    confirmation = "lab 3.1: public cases confirmed by held-out cases"
    for test in data["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in {"passed", "failed"}
        assert 0 <= test["score"] <= test["max_score"]
        if test["name"] == confirmation:
            # What the held-out case did not confirm of the public cases' points: shown with it, after publication.
            assert test["visibility"] == "after_published" and test["max_score"] == 0
            continue
        assert test["visibility"] == ("after_published" if test["name"] == held else "visible")
    # The score is the confirmed total: the tests' points, less what the confirmation test says it took.
    unconfirmed = sum(test["score"] for test in data["tests"]) - data["score"]
    assert unconfirmed >= -1e-2
    assert f"costs {unconfirmed:.2f} points" in next(test["output"] for test in data["tests"] if test["name"] == confirmation)
    by_name = {test["name"]: test for test in data["tests"]}
    assert by_name[held]["status"] == "failed" and "clause:  IR-TEXT-1" in by_name[held]["output"]
    assert "held out" in terminal.render(result, context.clauses)


def test_what_students_see_reveals_nothing_of_held_out_cases() -> None:
    """With every failing case held out, a broken submission looks exactly like a correct one."""
    context = prepare(parse_rubric(rubric_data(**{"3.1": {"weight": 40}})))
    failing = [graded.case.id for graded in grade_submission(TEXTOF_BUG, context).score.cases if not graded.passed]
    assert failing
    held = prepare(parse_rubric(rubric_data(**{"3.1": {"weight": 40}}) | {"held_out": failing}))
    seen = []
    for impl in (TEXTOF_BUG, "reference"):
        data = json.loads(gradescope.render(grade_submission(impl, held, name="student"), held.clauses))
        visible = [
            (test["name"], test["status"], test["output"], test["score"]) for test in data["tests"] if test["visibility"] == "visible"
        ]
        seen.append((data["output"], visible))
        assert not any(case_id in data["output"] for case_id in failing)
    assert seen[0] == seen[1]


def test_markdown_and_json_reports_carry_every_failing_case(textof_result: SubmissionResult) -> None:
    clauses = load_clauses()
    failing = [graded.case.id for graded in textof_result.score.cases if not graded.passed]
    assert failing
    text = markdown.render(textof_result, clauses)
    assert text.startswith("# pi-conformance grade: textof-bug")
    assert "| 3.1 |" in text and all(f"`{case_id}`" in text for case_id in failing)
    # One bug, one cause: its first case in full, every other case by id on one line.
    causes = {cause_of(graded.case, graded.outcome) for graded in textof_result.score.cases if not graded.passed}
    assert text.count("\n### `") == len(causes) < len(failing)
    assert f"{len(failing) - 1} more cases of lab 3.1 failed the same way" in text
    data = json.loads(json_report.render(textof_result, clauses))
    assert data["status"] == "ok" and data["max_points"] == 40
    cases = {entry["id"]: entry for entry in data["cases"]}
    assert {case_id for case_id, entry in cases.items() if entry["status"] != "passed"} == set(failing)
    first = cases[failing[0]]
    assert first["divergence"]["path"] == "value" and first["feedback"].startswith("value: expected")
    # The divergence as every report writes it (Divergence.to_json): kind and key included.
    assert set(first["divergence"]) == {"path", "expected", "actual", "note", "kind", "key"}


def test_the_grade_command_writes_each_format_to_its_own_file(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(yaml.safe_dump(rubric_data(**{"3.1": {"weight": 10}})), encoding="utf-8")
    files = {name: tmp_path / f"out.{name}" for name in ("markdown", "junit", "gradescope", "json")}
    command = ["grade", "--impl", TEXTOF_BUG, "--trust-python", "--rubric", str(rubric)]
    for name, path in files.items():
        command += [f"--{name}", str(path)]
    result = cli(*command, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "failing cases" in result.stdout
    ET.parse(files["junit"])
    assert json.loads(files["gradescope"].read_text(encoding="utf-8"))["tests"]
    assert json.loads(files["json"].read_text(encoding="utf-8"))["format"] == "pi-conformance-grade"
    assert files["markdown"].read_text(encoding="utf-8").startswith("# pi-conformance grade")


def test_the_grade_command_refuses_a_bad_rubric(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("version: 1\nlabs: {}\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "grade", "--rubric", str(rubric)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert result.returncode == 2 and "not a valid rubric" in result.stderr


# -- baselines ---------------------------------------------------------------------------


def test_baseline_verdicts() -> None:
    baseline = parse_baseline({"version": 1, "cases": {"a": "known", "b": "known", "gone": "renamed?"}})
    verdict = compare(baseline, [("a", "failed"), ("b", "passed"), ("c", "errored"), ("d", "passed")], known_ids=["a", "b", "c", "d"])
    assert verdict == Verdict(
        expected=["a"], unexpected=[("c", "errored")], stale=[("b", "passes now"), ("gone", "is not a case of this suite")]
    )
    assert not verdict.holds
    assert compare(baseline, [("a", "skipped")]).holds


def test_baseline_files_are_validated_and_round_trip(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="not a valid baseline"):
        parse_baseline({"version": 1, "cases": {"Not An Id": "x"}})
    previous = parse_baseline({"version": 1, "cases": {"a": "our JSON writer differs"}})
    document = baseline_document([("a", "failed", "x"), ("b", "errored", "boom\nmore"), ("c", "passed", "")], previous, "port")
    for name in ("known.yaml", "known.json"):
        write_baseline(tmp_path / name, document)
        loaded = load_baseline(tmp_path / name)
        assert loaded.cases == {"a": "our JSON writer differs", "b": "errored: boom"} and loaded.implementation == "port"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return cli(*args, timeout=120)


def test_run_with_a_baseline_fails_on_unexpected_and_stale_cases(tmp_path: Path) -> None:
    baseline = tmp_path / "known.yaml"
    selection = ["--lab", "3.1", "-k", "text-of"]
    written = run_cli("run", "--impl", TEXTOF_BUG, *selection, "--write-baseline", str(baseline))
    assert written.returncode == 1 and baseline.is_file(), written.stdout[-2000:]
    known = load_baseline(baseline)
    assert "text-of-fault-experiment-tool-name-excluded" in known.cases

    holds = run_cli("run", "--impl", TEXTOF_BUG, *selection, "--baseline", str(baseline))
    assert holds.returncode == 0, holds.stdout[-2000:]
    assert f"{len(known.cases)} known failures, 0 unexpected, 0 stale" in holds.stdout

    stale = run_cli("run", "--impl", "reference", *selection, "--baseline", str(baseline))
    assert stale.returncode == 1
    assert "stale:      text-of-fault-experiment-tool-name-excluded passes now" in stale.stdout

    smaller = {"version": 1, "cases": dict(list(known.cases.items())[1:])}
    baseline.write_text(yaml.safe_dump(smaller), encoding="utf-8")
    unexpected = run_cli("run", "--impl", TEXTOF_BUG, *selection, "--baseline", str(baseline))
    assert unexpected.returncode == 1
    assert f"unexpected: {next(iter(known.cases))} failed" in unexpected.stdout

    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 2\ncases: {}\n", encoding="utf-8")
    refused = run_cli("run", "--baseline", str(broken), *selection)
    assert refused.returncode == 2 and "not a valid baseline" in refused.stderr  # checked before any case runs


# -- shards, gradebooks, progress ----------------------------------------------------------


def test_shards_partition_the_class_the_same_way_everywhere() -> None:
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "2-4", "1/0"):
        with pytest.raises(ShardError):
            parse_shard(bad)
    names = [Path(f"student-{index:03d}") for index in range(23)]
    shards = [select_shard(list(reversed(names)), index, 4) for index in range(1, 5)]
    assert sorted(path for shard in shards for path in shard) == names
    assert sorted(len(shard) for shard in shards) == [5, 6, 6, 6]
    assert select_shard(names, 3, 4) == shards[2]


def _gradebook(path: Path, names: list[str], result: SubmissionResult, shard: tuple[int, int] = (1, 1)) -> None:
    results = [
        SubmissionResult(name, result.impl, result.implementation, result.status, result.detail, result.score, result.rubric, 1.0)
        for name in names
    ]
    write_gradebook(path, results, result.rubric)
    GradebookMeta(*shard, columns(result.rubric), names, complete=True).write(path)


def test_gradebooks_merge_and_refuse_overlaps(tmp_path: Path, textof_result: SubmissionResult) -> None:
    _gradebook(tmp_path / "a.csv", ["bob", "alice"], textof_result, (1, 2))
    _gradebook(tmp_path / "b.csv", ["carol"], textof_result, (2, 2))
    header, rows = read_gradebook(tmp_path / "a.csv")
    assert header[:5] == ["submission", "status", "total", "max_total", "lab_3.1"]
    assert header[5:] == ["cases_passed", "cases_total", "duration_s", "sandbox", "limits", "detail"]
    assert [row["submission"] for row in rows] == ["alice", "bob"]
    assert rows[0]["lab_3.1"] == f"{textof_result.score.points:.2f}"
    assert merge_gradebooks([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "all.csv") == 3
    merged = list(csv.DictReader(io.StringIO((tmp_path / "all.csv").read_text(encoding="utf-8"))))
    assert [row["submission"] for row in merged] == ["alice", "bob", "carol"]
    _gradebook(tmp_path / "c.csv", ["carol", "dave"], textof_result, (2, 2))
    with pytest.raises(GradebookError, match="shard 2/2 is given twice"):
        merge_gradebooks([tmp_path / "a.csv", tmp_path / "c.csv", tmp_path / "b.csv"], tmp_path / "bad.csv")
    # Three whole shards whose submissions overlap (a folder renamed between runs, say).
    for path, shard in (("a.csv", (1, 3)), ("b.csv", (2, 3)), ("c.csv", (3, 3))):
        _gradebook(tmp_path / path, [row["submission"] for row in read_gradebook(tmp_path / path)[1]], textof_result, shard)
    with pytest.raises(GradebookError, match="carol"):
        merge_gradebooks([tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"], tmp_path / "bad.csv")
    _gradebook(tmp_path / "a.csv", ["alice", "bob"], textof_result, (1, 2))
    (tmp_path / "d.csv").write_text("submission,total\nerin,1\n", encoding="utf-8")
    GradebookMeta(2, 2, ["submission", "total"], ["erin"], complete=True).write(tmp_path / "d.csv")
    with pytest.raises(GradebookError, match="columns differ"):
        merge_gradebooks([tmp_path / "a.csv", tmp_path / "d.csv"], tmp_path / "bad.csv")


def test_progress_writes_plain_lines_with_counts_when_not_a_terminal(textof_result: SubmissionResult) -> None:
    stream = io.StringIO()
    progress = Progress(2, stream, tty=False)
    progress.started("textof-bug")
    progress.started("other")
    progress.finished(textof_result)
    progress.close()
    assert (
        stream.getvalue()
        == f"[1/2 done, 1 running, 0 failed] textof-bug: {textof_result.score.points:.2f}/40.00 ok in {textof_result.duration_s:.1f} s\n"
    )


def test_the_manuals_rubric_example_is_valid_and_fits_the_fixtures() -> None:
    page = (REPO / "docs" / "rubric.md").read_text(encoding="utf-8")
    example = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    context = prepare(parse_rubric(yaml.safe_load(example), "docs/rubric.md"))
    assert context.rubric.max_score == 100 and len(context.rubric.held_out) == 2


def test_gradescope_starts_with_the_case_to_read_first(textof_result: SubmissionResult) -> None:
    data = json.loads(gradescope.render(textof_result, load_clauses()))
    assert data["output"].startswith("start here: 1 case to read first")
    first = data["tests"][0]
    assert first["status"] == "failed" and "hint:    If value shows a tool name" in first["output"]
    assert f"── lab 3.1: {first['name']}" in data["output"]
    statuses = [test["status"] for test in data["tests"]]
    assert statuses == sorted(statuses), "every failing case before the passed ones"
