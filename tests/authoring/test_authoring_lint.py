"""``fixtures lint``: each seeded mistake is reported once, as file:line: case-id: message."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.authoring.lint import SCHEMA_FILE, lint
from conformance.loading.loader import fixture_files, load_suite
from conformance.model.cases import LABS
from conformance.model.paths import fixtures_dir
from conformance.model.profiles import PROFILES
from tests.support.fixture_scratch import run_fixtures, scratch
from tests.support.paths import REPO
from tests.support.requirements import costly

PROBLEM_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): (?P<id>\S+): (?P<message>.+)$")

GOOD = """\
  - id: {id}
    lab: "3.1"
    clauses: [IR-TEXT-1]
    description: {description}
    operation: text_of
    input:
      message: {{role: user, content: [{{type: text, text: {text}}}], timestamp: 1}}
    expect: {{value: {text}, input_unchanged: true}}
"""
HEADER = '# yaml-language-server: $schema=../../spec/schemas/fixture-file.schema.json\nchapter: "03"\ntopic: seeded\ncases:\n'


@costly
def test_the_bundled_fixtures_are_clean() -> None:
    assert lint() == []


def test_every_bundled_file_names_the_schema_for_editors_by_a_path_that_resolves() -> None:
    for path in fixture_files(fixtures_dir()):
        text = path.read_text(encoding="utf-8")
        # A file of another profile names that profile's schema (its registry entry's fixture_schema).
        # A file shared by several profiles (fixtures/shared/) names the shared form's schema.
        own = next((profile for profile in PROFILES.values() if f"\nprofile: {profile.name}\n" in text), None)
        name = own.fixture_schema if own else "shared-" + SCHEMA_FILE if "\nprofile: [" in text else SCHEMA_FILE
        schema = (REPO / "spec" / "schemas" / name).resolve()
        first = text.splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), path
        assert (path.parent / first.split("$schema=", 1)[1]).resolve() == schema, path


def seeded(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A scratch folder with one seeded mistake per case, and a file without its header."""
    root = scratch(tmp_path)
    cases = [
        GOOD.format(id="seed-good", description="A good case.", text="hi"),
        GOOD.format(id="Seed_Bad_Id", description="An id with capitals and underscores.", text="a"),
        GOOD.format(id="seed-unknown-clause", description="Cites a clause the spec lacks.", text="b").replace("IR-TEXT-1", "IR-TEXT-99"),
        GOOD.format(id="seed-same-inputs", description="Feeds exactly what seed-good feeds.", text="hi"),
        GOOD.format(id="seed-schema", description="A role the IR does not have.", text="c").replace("role: user", "role: robot"),
        GOOD.format(id="seed-two-lines", description='"First line.\\nSecond line."', text="d"),
    ]
    seeded_file = root / "ch03" / "seeded.yaml"
    seeded_file.write_text(HEADER + "\n".join(cases), encoding="utf-8")
    # In a file of its own: the loader skips schema checks for a file holding a non-JSON value.
    dated = GOOD.format(id="seed-date", description="A YAML date.", text="e").replace("timestamp: 1", "timestamp: 2024-01-01")
    (root / "ch03" / "dated.yaml").write_text(HEADER + dated, encoding="utf-8")
    headerless = root / "ch03" / "headerless.yaml"
    without_header = HEADER.split("\n", 1)[1]
    headerless.write_text(without_header + GOOD.format(id="seed-headerless", description="No header.", text="f"), encoding="utf-8")
    return root, seeded_file, headerless


def test_seeded_mistakes_are_each_reported_at_their_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, seeded_file, headerless = seeded(tmp_path)
    code, out, err = run_fixtures(capsys, "lint", "--fixtures", str(root))
    assert code == 1 and "problem(s)" in err
    lines = out.splitlines()
    assert all(PROBLEM_LINE.match(line) for line in lines), lines
    seeded_name = "fixtures/ch03/seeded.yaml"

    def reported(line: int, case_id: str, *fragments: str) -> None:
        matching = [text for text in lines if text.startswith(f"{seeded_name}:{line}: {case_id}: ")]
        assert any(all(fragment in text for fragment in fragments) for text in matching), (line, case_id, lines)

    starts = [number for number, text in enumerate(seeded_file.read_text().splitlines(), start=1) if text.startswith("  - id:")]
    reported(starts[1], "Seed_Bad_Id", "id:", "does not match")
    # Each problem is at its own line: the clause list's, the misspelt role's.
    reported(starts[2] + 2, "seed-unknown-clause", "unknown clause id 'IR-TEXT-99'")
    reported(starts[3], "seed-same-inputs", "same operation, input and steps", f"seed-good at {seeded_name}:{starts[0]}")
    reported(starts[4] + 6, "seed-schema", "input.message.role", '"robot" is not a role')
    reported(starts[5] + 3, "seed-two-lines", "description: must be one line")
    dated_line = next(n for n, text in enumerate((root / "ch03" / "dated.yaml").read_text().splitlines(), 1) if "2024-01-01" in text)
    assert f"fixtures/ch03/dated.yaml:{dated_line}: seed-date: input.message.timestamp: datetime.date(2024, 1, 1) is a YAML date" in out
    assert "fixtures/ch03/headerless.yaml:1: -: first line must be the schema header for editors: # yaml-language-server:" in out
    # The good case and the untouched scratch files have nothing to report.
    assert "seed-good:" not in out and "constructors.yaml" not in out
    assert headerless.read_text().startswith("chapter")


def test_a_header_that_does_not_resolve_is_reported(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    path = root / "ch03" / "constructors.yaml"
    path.write_text(path.read_text().replace("../../spec/", "../spec/", 1), encoding="utf-8")
    [problem] = lint(root)
    assert str(problem).startswith("fixtures/ch03/constructors.yaml:1: -: the schema header's path '../spec/schemas/")


def test_a_missing_lab_is_reported(tmp_path: Path) -> None:
    root = scratch(tmp_path, {"ch03/constructors.yaml": ["make-text-empty"]})
    messages = [str(problem) for problem in lint(root)]
    how = " (a folder of extra cases, such as a held-out set or a fuzz finding: lint it with --extra)"
    assert messages == [f"fixtures:0: -: no case for lab {lab}: every lab needs at least one{how}" for lab in LABS if lab != "3.1"]


def test_a_folder_of_extra_cases_lints_clean_with_extra(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A held-out set: two cases of lab 4.2 and none of the other labs.
    root = scratch(
        tmp_path,
        {"ch04/aborts.yaml": ["sm-abort-settle-between-calls"], "ch04/exhaustion.yaml": ["sm-exhaust-result-without-consume-resolves"]},
    )
    code, out, err = run_fixtures(capsys, "lint", "--fixtures", str(root))
    assert code == 1 and out.count("lint it with --extra") == 19, out
    code, out, err = run_fixtures(capsys, "lint", "--fixtures", str(root), "--extra")
    assert (code, out, err) == (0, "", "fixtures lint: no problems\n")
    # --extra drops the every-lab check only: a mistake in an extra case is still reported.
    path = root / "ch04" / "aborts.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace('lab: "4.2"', 'lab: "4.9"'), encoding="utf-8")
    code, out, err = run_fixtures(capsys, "lint", "--fixtures", str(root), "--extra")
    assert code == 1 and "sm-abort-settle-between-calls" in out and "every lab" not in out, out


def test_unparsable_yaml_is_reported_with_its_line(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    path = root / "ch03" / "constructors.yaml"
    ids = re.findall(r"^  - id: (\S+)$", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    path.write_text(path.read_text() + "  - id: [unclosed\n", encoding="utf-8")
    # Every case of the file is still loaded as broken (read from the text), so totals keep counting them...
    assert [broken.id for broken in load_suite(root).broken] == ids
    # ...and lint says the file's one problem once, at the line of the mistake.
    [problem] = lint(root)
    last = len(path.read_text(encoding="utf-8").splitlines())
    assert (problem.file, problem.case_id) == ("fixtures/ch03/constructors.yaml", "-") and "not valid YAML" in problem.message
    assert problem.line in (last, last + 1)  # where the parser gave up: the open list runs to the end


def test_an_expected_value_that_is_not_valid_ir_is_reported_at_its_case(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    path = root / "ch03" / "constructors.yaml"
    text = path.read_text(encoding="utf-8")
    # No text() could return a block whose text is a number: IR says text is a string.
    path.write_text(
        text.replace('        text: "我先读取项目说明。"', '        text: {$oneOf: ["ok", {$type: number}]}', 1), encoding="utf-8"
    )
    [problem] = lint(root)
    case_line = 1 + path.read_text(encoding="utf-8").splitlines().index("  - id: make-text-readme-explanation")
    assert (problem.file, problem.line, problem.case_id) == ("fixtures/ch03/constructors.yaml", case_line, "make-text-readme-explanation")
    assert problem.message.startswith(
        "expect.value.text: no valid TextContent (spec/schemas/ir.schema.json) matches this expectation: 0.5 is not of type 'string'"
    )


def test_every_matcher_is_accepted_where_a_value_of_its_kind_would_be(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    path = root / "ch03" / "constructors.yaml"
    text = path.read_text(encoding="utf-8")
    for matcher in ("{$any: true}", "{$type: string}", '{$oneOf: ["a", {$type: string}]}'):
        path.write_text(text.replace('        text: "我先读取项目说明。"', f"        text: {matcher}", 1), encoding="utf-8")
        assert lint(root) == [], matcher
    # ... and refused where no value of its kind would be valid IR.
    path.write_text(text.replace('        text: "我先读取项目说明。"', "        text: {$type: number}", 1), encoding="utf-8")
    assert [problem.case_id for problem in lint(root)] == ["make-text-readme-explanation"]


def test_a_first_hint_rung_no_failure_can_show_is_reported_with_how_to_make_it_fit(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    path = root / "ch03" / "text-of.yaml"
    text = path.read_text(encoding="utf-8")
    case = text.index("  - id: text-of-readme-user\n")
    start = text.index("    hint:\n      - ", case) + len("    hint:\n      - ")
    end = text.index("\n", start)

    def with_first_rung(rung: str) -> None:
        path.write_text(text[:start] + f"'{rung}'" + text[end:], encoding="utf-8")

    # Written as code (message.content), the key is not the hint's condition; a function of another operation never shows.
    for rung, says in (
        ("If message.content is joined wrongly, look at textOf.", "names none of the observation keys a failure is matched by"),
        ("If value is wrong, look at currentSystemMessage.", "names currentSystemMessage, which a text_of case does not check"),
    ):
        with_first_rung(rung)
        [problem] = lint(root)
        assert problem.case_id == "text-of-readme-user" and problem.message.startswith(f"hint[0] {says}"), problem
    with_first_rung("If value is wrong, look at textOf.")
    assert lint(root) == []


def test_the_fixture_format_lists_exactly_the_keys_a_hint_is_matched_by() -> None:
    from conformance.judging.bearing import HINT_KEYS
    from tests.support.paths import REPO

    section = (REPO / "spec" / "fixture-format.md").read_text(encoding="utf-8").split("### Hints", 1)[1].split("\n## ", 1)[0]
    listed = section.split("on the diverging path (an unexpected key included):", 1)[1].split(". Write", 1)[0]
    assert set(re.findall(r"`(\w+)`", listed)) == HINT_KEYS
