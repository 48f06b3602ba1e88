"""A file YAML cannot parse still has its other cases checked: the ones before and after the mistake.

Issue 38: an indentation that broke the YAML gave one parser line and hid the file's other
problems. The entry holding the error is blanked out (its lines kept, so every other line keeps
its number), the rest is parsed and checked, and every case is still reported broken with the
YAML error, since the file as written is unusable.
"""

from __future__ import annotations

from pathlib import Path

from conformance.authoring.lint import lint
from conformance.loading.broken_yaml import without_entry_at
from conformance.loading.loader import load_suite
from tests.support.fixture_scratch import scratch

HEADER = '# yaml-language-server: $schema=../../spec/schemas/fixture-file.schema.json\nchapter: "03"\ntopic: recovery\ncases:\n'


def _case(case_id: str, description: str, clause: str = "SYS-PROMPT-1", typo: bool = False) -> str:
    key = "descripton" if typo else "description"
    return (
        f"  - id: {case_id}\n"
        '    lab: "3.1"\n'
        f"    clauses: [{clause}]\n"
        f"    {key}: {description}\n"
        "    operation: current_system_prompt\n"
        f"    input: {{messages: [{{role: user, content: [{{type: text, text: {case_id}}}], timestamp: 1}}]}}\n"
        "    expect: {value: null}\n"
    )


BROKEN = (
    HEADER
    + _case("rec-sys-before", "A case before the mistake, with a misspelt key.", typo=True)
    + _case("rec-sys-broken", "'The apostrophe in it's ends this string.'")
    + _case("rec-sys-after", "A case after the mistake, citing a clause that does not exist.", clause="SYS-PROMPT-99")
)


def _tree(tmp_path: Path, text: str) -> tuple[Path, Path]:
    root = scratch(tmp_path)
    path = root / "ch03" / "recovery.yaml"
    path.write_text(text, encoding="utf-8")
    return root, path


def _line(text: str, fragment: str) -> int:
    return next(number for number, line in enumerate(text.split("\n"), start=1) if fragment in line)


def test_the_cases_around_a_yaml_error_are_checked_each_at_its_line(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path, BROKEN)
    found = [problem for problem in lint(root) if problem.file.endswith("recovery.yaml")]
    yaml_errors = [problem for problem in found if problem.message.startswith("not valid YAML at line")]
    # The parse error is said once, at its line, for the whole file.
    assert len(yaml_errors) == 1 and yaml_errors[0].case_id == "-"
    assert yaml_errors[0].line == _line(BROKEN, "it's")
    by_case = {problem.case_id: problem for problem in found if problem not in yaml_errors}
    assert by_case["rec-sys-before"].line == _line(BROKEN, "descripton")
    assert "unknown key 'descripton'" in by_case["rec-sys-before"].message
    assert by_case["rec-sys-after"].line == _line(BROKEN, "SYS-PROMPT-99")
    assert "unknown clause id 'SYS-PROMPT-99'" in by_case["rec-sys-after"].message
    assert "rec-sys-broken" not in by_case


def test_every_case_of_the_file_stays_broken_in_a_run(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path, BROKEN.replace("descripton", "description").replace("SYS-PROMPT-99", "SYS-PROMPT-1"))
    suite = load_suite(root)
    broken = {entry.id: entry for entry in suite.broken if entry.file.endswith("recovery.yaml")}
    assert set(broken) == {"rec-sys-before", "rec-sys-broken", "rec-sys-after"}
    assert not [case for case in suite.cases if case.file.endswith("recovery.yaml")]
    for entry in broken.values():
        assert entry.lab == "3.1" and entry.chapter == "03"
        assert [message for message in entry.problems if message.startswith("not valid YAML at line")], entry


def test_when_the_rest_does_not_parse_either_the_file_is_one_problem_as_before(tmp_path: Path) -> None:
    # A second mistake in another case: blanking one entry leaves the file unparseable.
    text = BROKEN.replace("A case after the mistake", "'A case after the mistake's end'")
    root, _ = _tree(tmp_path, text)
    found = [problem for problem in lint(root) if problem.file.endswith("recovery.yaml")]
    assert len(found) == 1 and found[0].message.startswith("not valid YAML at line"), found


def test_blanking_keeps_every_other_line_where_it_was() -> None:
    line = _line(BROKEN, "it's")
    result = without_entry_at(BROKEN, line)
    assert result is not None
    rest, blanked = result
    assert [entry.id for entry in blanked] == ["rec-sys-broken"]
    assert len(rest.split("\n")) == len(BROKEN.split("\n"))
    assert rest.split("\n")[_line(BROKEN, "rec-sys-after") - 1] == "  - id: rec-sys-after"
    assert "rec-sys-broken" not in rest
    assert without_entry_at(BROKEN, 2) is None  # a mistake in the header: no case holds it


def test_lints_own_checks_of_the_text_reach_the_cases_around_the_mistake_too(tmp_path: Path) -> None:
    text = BROKEN.replace("A case after the mistake, citing a clause that does not exist.", "|\n      Two lines\n      of description.")
    root, _ = _tree(tmp_path, text)
    found = [problem for problem in lint(root) if problem.case_id == "rec-sys-after"]
    assert [problem.line for problem in found if problem.message.startswith("description: must be one line")] == [_line(text, "|")]
