"""Student text reaches no report, terminal, spreadsheet or XML file as anything but inert text.

Drills of issue 23 (item 3): a ``cmd:`` program (``tests/support/fakes/hostile_text.py``) answers with
a lone surrogate, terminal escape sequences, Markdown that forges a heading and a total, and
characters XML cannot hold; a batch holds folders named like spreadsheet formulas. Each is
graded as a user would, and what comes out is read back the way its consumer reads it.
"""

from __future__ import annotations

import csv
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.settings import ImplSettings
from conformance.common import student_text as studenttext
from conformance.farm.gradebook import read_gradebook
from conformance.farm.progress import Progress
from conformance.grading.grader import planned_isolation
from tests.support.batch_helpers import RUBRIC
from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import costly, require

FAKE = REPO / "tests" / "support" / "fakes" / "hostile_text.py"
REPORTS = ("markdown", "junit", "json", "gradescope")
#: ESC, BEL, the 8-bit CSI and a carriage return that is not part of a CRLF: none may be printed.
RAW_CONTROLS = re.compile("[\x1b\x07\x9b\x00\x7f]|\r(?!\n)")


def hostile_impl(mode: str) -> str:
    return f"cmd:{sys.executable} {FAKE} {mode}"


def grade(tmp_path: Path, mode: str, *extra: str) -> tuple[object, dict[str, Path]]:
    """``grade`` a hostile program on lab 3.1, every report asked for; the process and the report paths."""
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    paths = {name: tmp_path / f"report.{name}" for name in REPORTS}
    reports = [argument for name, path in paths.items() for argument in (f"--{name}", str(path))]
    return cli("grade", "--impl", hostile_impl(mode), "--rubric", str(rubric), *reports, *extra), paths


def assert_graded(result: object, paths: dict[str, Path]) -> dict[str, Any]:
    """No traceback, every report written and readable; the JSON report (parsed JSON, walked key by key)."""
    import subprocess

    assert isinstance(result, subprocess.CompletedProcess)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.returncode in (0, 1), (result.returncode, result.stderr[-3000:])
    for path in paths.values():
        assert path.exists(), f"{path.name} was not written"
        path.read_bytes().decode("utf-8")  # strict: valid UTF-8 through and through
    ET.parse(paths["junit"])
    json.loads(paths["gradescope"].read_text(encoding="utf-8"))
    report = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert isinstance(report, dict)
    return report


# -- the module ---------------------------------------------------------------------------------


def test_cap_says_how_much_was_left_out() -> None:
    assert studenttext.cap("abc", 5) == "abc"
    assert studenttext.cap("a" * 10, 4) == "aaaa… [6 more characters]"


def test_budget_caps_each_field_and_the_submission() -> None:
    budget = studenttext.Budget(limit=3 * studenttext.FIELD_LIMIT)
    kept = [budget.take("x" * 10 * studenttext.FIELD_LIMIT) for _ in range(10)]
    assert len(kept[0]) < studenttext.FIELD_LIMIT + 40
    assert "more characters]" in kept[0]
    assert all(len(text) < studenttext.SPENT_FIELD_LIMIT + 40 for text in kept[4:])
    assert sum(map(len, kept)) < 3 * studenttext.FIELD_LIMIT + 10 * (studenttext.SPENT_FIELD_LIMIT + 40)


def test_surrogates_and_invalid_utf8_become_replacement_characters() -> None:
    decoded = json.loads('{"k\\udc00": ["a\\ud800b", {"x": "\\udfff"}], "pair": "\\ud83d\\ude00"}')
    scrubbed = studenttext.scrub_json(decoded)
    assert json.dumps(scrubbed, ensure_ascii=False).encode("utf-8")
    assert scrubbed == {"k\ufffd": ["a\ufffdb", {"x": "\ufffd"}], "pair": "\U0001f600"}
    assert studenttext.decode_line(b'"\xed\xa0\x80 \xff"') == '"\ufffd\ufffd\ufffd \ufffd"'
    deep: object = "\ud800"
    for _ in range(5000):
        deep = [deep]
    studenttext.scrub_json(deep)  # any depth, no RecursionError


def test_terminal_text_keeps_newlines_and_tabs_and_escapes_every_other_control() -> None:
    text = "a\tb\nc\r\nd\re\x1b[2J\x07\x9b\x7f\u202e\ud800"
    safe = studenttext.for_terminal(text)
    assert safe == "a\tb\nc\nd\\re\\x1b[2J\\x07\\x9b\\x7f\\u202e\\ud800"
    assert not RAW_CONTROLS.search(safe)


def test_markdown_fence_is_longer_than_any_backtick_run() -> None:
    fenced = studenttext.markdown_fence("x\n   ``````\ny ```` z")
    assert fenced.startswith("```````text\n") and fenced.endswith("\n```````")
    assert studenttext.markdown_code("a`b\nc") == "``a`b c``"


def test_xml_text_holds_only_what_xml_can() -> None:
    safe = studenttext.for_xml("ok \ufffe \uffff \x00 \x1b \ud800 \t\n é \U0001f600")
    ET.fromstring(f"<a>{safe}</a>")
    assert safe == "ok \\ufffe \\uffff \\x00 \\x1b \\ud800 \t\n é \U0001f600"


@pytest.mark.parametrize("cell", ['=HYPERLINK("http://evil.example","x")', "+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "'=x"])
def test_formula_cells_are_neutralised_reversibly(cell: str) -> None:
    safe = studenttext.csv_cell(cell)
    assert safe.startswith("'")
    assert studenttext.csv_cell_value(safe) == cell


def test_plain_cells_and_numbers_are_left_alone() -> None:
    for cell in ("alice", "12.50", "", "a=b", "bob-2"):
        assert studenttext.csv_cell(cell) == cell


# -- drills: grade ------------------------------------------------------------------------------


def test_a_lone_surrogate_in_an_answer_costs_only_the_cases_it_answers(tmp_path: Path) -> None:
    result, paths = grade(tmp_path, "surrogate")
    report = assert_graded(result, paths)
    cases = report["cases"]
    assert isinstance(cases, list)
    text_of = [case for case in cases if case["id"].startswith("text-of-")]
    others = [case for case in cases if not case["id"].startswith("text-of-")]
    assert text_of and all(case["status"] == "failed" for case in text_of)
    assert others and all(case["status"] == "passed" for case in others)
    assert "\ufffd" in text_of[0]["message"]
    assert report["sandbox"] == planned_isolation(hostile_impl("surrogate"), ImplSettings())


def test_a_lone_surrogate_in_a_thrown_message_is_reported_not_a_crash(tmp_path: Path) -> None:
    result, paths = grade(tmp_path, "surrogate-threw")
    report = assert_graded(result, paths)
    assert report["status"] == "ok"
    assert all(case["status"] == "failed" and "\ufffd lone" in case["message"] for case in report["cases"])


def test_escape_sequences_are_never_printed_raw(tmp_path: Path) -> None:
    result, paths = grade(tmp_path, "escapes", "--verbose")
    assert_graded(result, paths)
    printed = result.stdout + result.stderr  # type: ignore[attr-defined]
    assert "pwned title" in printed and "EVERYTHING PASSED" in printed  # the text is shown...
    assert not RAW_CONTROLS.search(printed), RAW_CONTROLS.search(printed)  # ...inert
    gradescope = json.loads(paths["gradescope"].read_text(encoding="utf-8"))
    assert not RAW_CONTROLS.search(gradescope["output"])


def markdown_outside_code(markdown: str) -> list[str]:
    """The lines of ``markdown`` outside fenced code blocks, as CommonMark reads fences (inline code spans removed)."""
    outside: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        match = re.match(r"^ {0,3}(`{3,}|~{3,})(.*)$", line)
        if fence is None:
            if match and not (match[1][0] == "`" and "`" in match[2]):
                fence = match[1]
                continue
            outside.append(re.sub(r"(`+)(?:(?!\1).)+?\1", "", line))
        elif match and match[1][0] == fence[0] and len(match[1]) >= len(fence) and not match[2].strip():
            fence = None
    return outside


def test_markdown_cannot_forge_a_heading_or_a_total(tmp_path: Path) -> None:
    result, paths = grade(tmp_path, "markdown")
    assert_graded(result, paths)
    markdown = paths["markdown"].read_text(encoding="utf-8")
    outside = markdown_outside_code(markdown)
    assert [line for line in outside if line.startswith("# ")] == [outside[0]]
    assert not [line for line in outside if "100.00 / 100.00" in line and "Total" in line]
    assert not [line for line in outside if line.startswith("| total")]
    assert "**Total: 0.00 / 10.00**" in markdown  # the real total, lab 3.1 weighing 10


def test_characters_xml_cannot_hold_leave_junit_parseable(tmp_path: Path) -> None:
    result, paths = grade(tmp_path, "xml-forbidden")
    assert_graded(result, paths)
    root = ET.parse(paths["junit"]).getroot()
    failures = root.findall(".//failure")
    assert failures and all("\\ufffe" in (failure.text or "") for failure in failures)


# -- drills: grade-batch --------------------------------------------------------------------------

FORMULA_NAMES = ('=HYPERLINK("evil.example","click")', "+cmd", "-2+3", "@SUM(A1)")
ESCAPE_NAME = "\x1b]0;pwned\x07\x1b[2Jname"


@costly
def test_a_batch_neutralises_formulas_and_escapes_and_keeps_what_a_surrogate_submission_earned(tmp_path: Path) -> None:
    require("needs_bwrap")  # --jobs 2 without a sandbox is refused
    submissions = tmp_path / "submissions"
    modes = {**dict.fromkeys(FORMULA_NAMES, "ok"), ESCAPE_NAME: "escapes", "surrogate": "surrogate-threw", "ok": "ok"}
    for name, mode in modes.items():
        (submissions / name).mkdir(parents=True)
        (submissions / name / "mode").write_text(mode, encoding="utf-8")
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    out = tmp_path / "out"
    template = f"cmd:{sys.executable} {FAKE} {{path}}"
    result = cli("grade-batch", str(submissions), "--rubric", str(rubric), "--impl-template", template, "--out", str(out), "--jobs", "2")
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert not RAW_CONTROLS.search(result.stdout + result.stderr)
    assert "pwned" in result.stderr  # the name is shown, inert
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as file:
        cells = [row["submission"] for row in csv.DictReader(file)]
    for name in FORMULA_NAMES:
        assert f"'{name}" in cells
    assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@"))]
    graded = {row["submission"]: row for row in read_gradebook(out / "gradebook.csv")[1]}  # as grade-batch reads it back
    assert set(FORMULA_NAMES) <= set(graded)
    expected_sandbox = planned_isolation(template, ImplSettings())
    surrogate = graded["surrogate"]
    assert surrogate["status"] == "ok" and surrogate["sandbox"] == expected_sandbox, surrogate
    assert float(surrogate["total"]) == 0.0 and int(surrogate["cases_total"]) > 0
    assert graded["ok"]["total"] == graded["ok"]["max_total"]
    assert (out / "reports" / "surrogate" / "junit.xml").exists()
    # Resumed: every row is found again, nothing is graded twice.
    again = cli("grade-batch", str(submissions), "--rubric", str(rubric), "--impl-template", template, "--out", str(out))
    assert f"{len(modes)} of {len(modes)} submissions already graded" in again.stderr, again.stderr


class _Terminal:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_the_progress_line_escapes_names_and_details() -> None:
    from types import SimpleNamespace

    terminal = _Terminal()
    progress = Progress(2, terminal, tty=True)  # type: ignore[arg-type]
    progress.started(ESCAPE_NAME)
    score = SimpleNamespace(points=0.0, max_points=10.0)
    result = SimpleNamespace(name=ESCAPE_NAME, status="crashed", detail="x\ry\x1b]52;c;Zm9v\x07", score=score, duration_s=1.0)
    progress.finished(result)  # type: ignore[arg-type]
    progress.close()
    own = terminal.text.replace("\r\x1b[K", "")  # the progress line's own redraw, and nothing else
    assert not RAW_CONTROLS.search(own), repr(own)
    assert "pwned" in own


def test_run_prints_no_escape_sequence_either() -> None:
    result = cli("run", "--impl", hostile_impl("escapes"), "--lab", "3.1", "-v")
    assert "pwned title" in result.stdout, result.stdout[-2000:]
    assert not RAW_CONTROLS.search(result.stdout + result.stderr), RAW_CONTROLS.search(result.stdout + result.stderr)
