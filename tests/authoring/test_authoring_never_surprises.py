"""Authoring never surprises: a new case breaks no test, a typo is named where it is, totals stay honest."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from conformance.adapters.reference import create as reference_adapter
from conformance.authoring import coverage
from conformance.authoring.lint import lint
from conformance.loading.loader import load_suite
from conformance.model.clauses import load_clauses
from conformance.running.engine import run_alone
from tests.support.cli_runner import cli
from tests.support.fixture_scratch import run_fixtures
from tests.support.paths import REPO
from tests.support.requirements import costly
from tests.support.variant_expectations import EXPECTATIONS, outcome_problems


def bundled_copy(tmp_path: Path) -> Path:
    """A copy of every bundled fixture file, with ``spec/schemas`` beside it so headers resolve."""
    root = tmp_path / "fixtures"
    shutil.copytree(REPO / "fixtures", root)
    shutil.copytree(REPO / "spec" / "schemas", tmp_path / "spec" / "schemas")
    return root


#: The file the checks of one file's problems edit; they lint a folder of it alone (see :func:`one_file_copy`).
TURNS = "ch04/tool-call-turns.yaml"


def one_file_copy(tmp_path: Path, relative: str = TURNS) -> Path:
    """The bundled file ``relative`` alone in a fixtures folder, with ``spec/schemas`` beside it.

    For a check of the problems lint finds in that file: lint checks every file of its folder
    (``only`` narrows the checks of a file's own text, not the loading), about 8 s of CPU for a
    copy of every bundled file, which the problems of one file do not depend on.
    """
    root = tmp_path / "fixtures"
    (root / relative).parent.mkdir(parents=True)
    shutil.copyfile(REPO / "fixtures" / relative, root / relative)
    shutil.copytree(REPO / "spec" / "schemas", tmp_path / "spec" / "schemas")
    return root


def fill_in(path: Path, values: dict[str, str]) -> None:
    text = path.read_text(encoding="utf-8")
    for key, value in values.items():

        def fill(match: re.Match[str], v: str = value) -> str:
            return f"{match[1]}: {v}"

        text, count = re.subn(rf"^(\s+{key}): .*TODO:.*$", fill, text, count=1, flags=re.MULTILINE)
        assert count == 1, key
    path.write_text(text, encoding="utf-8")


@costly
def test_a_case_added_with_fixtures_new_changes_no_expected_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = bundled_copy(tmp_path)
    before = load_suite(root)
    code, _, err = run_fixtures(
        capsys, "new", "--fixtures", str(root), "--operation", "text_of", "--lab", "3.1", "--slug", "added-by-a-test"
    )
    assert code == 0, err
    fill_in(
        root / "ch03" / "text-of.yaml",
        {
            "clauses": "[IR-TEXT-1, IR-TEXT-4]",
            "description": "A test adds this case to a copy of the fixtures; no count anywhere may change by hand.",
            "message": '{role: user, content: [{type: text, text: "甲"}, {type: text, text: "乙\\n"}], timestamp: 3}',
            "value": '"甲\\n乙\\n"',
        },
    )
    assert [str(problem) for problem in lint(root, only=[root / "ch03" / "text-of.yaml"])] == []
    after = load_suite(root)
    assert len(after.cases) == len(before.cases) + 1 and after.broken == []
    # Coverage still holds, and every count the tests expect comes from the loaded cases.
    table = coverage.compute(load_clauses(), after.cases, "test")
    assert table.unchecked == []
    adapter = reference_adapter()
    # Every case must pass, not pass fast: a generous timeout, so a loaded machine (eight busy
    # workers timed one out once) does not fail a test of counts.
    results = {case.id: run_alone(adapter, case, timeout_s=10) for case in after.cases}
    assert {outcome.status for outcome in results.values()} == {"passed"}
    assert outcome_problems(EXPECTATIONS["course-correct"]["outcomes"], results, after) == []  # type: ignore[arg-type]
    assert Counter(case.lab for case in after.cases)["3.1"] == Counter(case.lab for case in before.cases)["3.1"] + 1


def test_a_misspelt_key_inside_an_expected_event_fails_lint_naming_it(tmp_path: Path) -> None:
    root = one_file_copy(tmp_path)
    path = root / TURNS
    text = path.read_text(encoding="utf-8")
    index = text.index("            - type: toolcall_delta\n              contentIndex: 1")
    path.write_text(text[:index] + text[index:].replace("contentIndex: 1", "content_index: 1", 1), encoding="utf-8")
    problems = [problem for problem in lint(root, only=[path]) if "content_index" in problem.message]
    assert len(problems) == 1
    [problem] = problems
    assert problem.file == "fixtures/ch04/tool-call-turns.yaml"
    assert problem.case_id == "sm-tool-text-then-read-readme"
    assert "steps[1].expect.events[2].content_index: unknown key 'content_index' (did you mean 'contentIndex'?)" in problem.message


def test_a_schema_error_in_a_turn_says_what_is_wrong_without_dumping_it(tmp_path: Path) -> None:
    root = one_file_copy(tmp_path)
    path = root / TURNS
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("name: read, arguments: {path: README.md}}", "name: read, args: {path: README.md}}", 1), encoding="utf-8")
    [problem] = [problem for problem in lint(root, only=[path]) if problem.case_id == "sm-tool-text-then-read-readme"]
    assert "input.turns[0].content[1].args: unknown key 'args' (did you mean 'arguments'?)" in problem.message
    assert "'text' was expected" not in problem.message and "…" not in problem.message


def test_a_thinking_block_is_named_as_outside_the_ir(tmp_path: Path) -> None:
    root = one_file_copy(tmp_path)
    path = root / TURNS
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('- {type: text, text: "先看"}', '- {type: thinking, text: "先看"}', 1), encoding="utf-8")
    [problem] = [problem for problem in lint(root, only=[path]) if problem.case_id == "sm-tool-text-then-read-readme"]
    assert "input.turns[0].content[0].type" in problem.message and "no thinking block" in problem.message


def test_an_unparsable_file_keeps_its_cases_in_the_totals(tmp_path: Path) -> None:
    root = bundled_copy(tmp_path)
    path = root / "ch04" / "text-turns.yaml"
    ids = re.findall(r"^  - id: (\S+)$", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    by_id = {case.id: case.lab for case in load_suite().cases}
    labs = [by_id[case_id] for case_id in ids]
    path.write_text(path.read_text(encoding="utf-8").replace("cases:\n", "cases:\n  - [unclosed\n", 1), encoding="utf-8")
    suite = load_suite(root)
    broken = [entry for entry in suite.broken if entry.file == "fixtures/ch04/text-turns.yaml"]
    assert [entry.id for entry in broken] == ids and len(ids) > 1
    assert [entry.lab for entry in broken] == labs
    assert all("not valid YAML" in entry.problems[0] for entry in broken)
    assert len(suite.cases) + len(suite.broken) == len(load_suite().cases)


def test_an_unknown_lab_or_clause_is_a_usage_error_listing_the_valid_ones() -> None:
    result = cli("run", "--impl", "reference", "--lab", "9.9", "--clause", "SM-NOPE-1", timeout=120)
    assert result.returncode == 4, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "--lab 9.9: no such lab; valid labs: 3.1, 3.2, 4.1, 4.2" in output
    assert "--clause SM-NOPE-1: no such clause in spec/spec.md" in output and "SM-ABORT-1" in output
    assert "no case matches" not in output


def test_fixtures_new_lists_each_candidate_file_with_its_topic(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_fixtures(capsys, "new", "--operation", "scripted_model", "--lab", "4.1")
    assert code != 0
    assert "fixtures/ch04/tool-call-turns.yaml  topic 'tool-call turns, raw arguments and the JSON text of arguments'" in err


def test_an_unknown_feature_fails_lint_with_a_suggestion(tmp_path: Path) -> None:
    root = one_file_copy(tmp_path)
    path = root / TURNS
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("features: [js-number-text]", "features: [js-number-txt]", 1), encoding="utf-8")
    problems = [str(problem) for problem in lint(root, only=[path]) if "features" in problem.message]
    assert len(problems) == 1 and "unknown feature 'js-number-txt'" in problems[0] and "did you mean 'js-number-text'?" in problems[0]


def test_coverage_counts_the_clauses_beyond_the_chapter_text_by_source() -> None:
    table = coverage.compute(load_clauses(), load_suite().cases, "test")
    beyond = {row.id: row.beyond_chapter for row in table.rows if row.beyond_chapter}
    assert beyond["SM-JSON-1"] == ("js-semantics",)
    assert beyond["SM-TOOL-1"] == ("course-code",) and beyond["SM-ERR-2"] == ("course-code",)
    assert {"STREAM-1", "STREAM-4", "STREAM-6", "STREAM-7", "STREAM-8", "SM-EXHAUST-1", "SM-ABORT-1"} <= set(beyond)
    assert "go beyond the chapter text" in table.summary()
    assert "SM-DONE-3" not in beyond and "SM-CTX-1" not in beyond
