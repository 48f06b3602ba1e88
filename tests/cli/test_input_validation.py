"""Every bad number, output path and input file is one clear error, exit 2, before any work.

No traceback reaches the user, and nothing already written is lost.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.farm.batch import impl_for
from tests.support.batch_helpers import RUBRIC, cli, make_class


def _refused(result: object, *needles: str) -> None:
    import subprocess

    assert isinstance(result, subprocess.CompletedProcess)
    assert result.returncode == 2, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "INTERNALERROR" not in result.stdout + result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def _command(command: str, tmp_path: Path) -> list[str]:
    """The command with what it needs besides the option under test (grade-batch: a folder, an --out)."""
    return [command, str(tmp_path), "--out", str(tmp_path / "out")] if command == "grade-batch" else [command]


@pytest.fixture
def rubric(tmp_path: Path) -> Path:
    path = tmp_path / "rubric.yaml"
    path.write_text(RUBRIC, encoding="utf-8")
    return path


# -- numbers ---------------------------------------------------------------------------------

BAD_NUMBERS = [
    ("--timeout", "nan"),
    ("--timeout", "inf"),
    ("--timeout", "-1"),
    ("--timeout", "0"),
    ("--budget", "0"),
    ("--budget", "nan"),
    ("--budget", "-inf"),
    ("--cpu-limit", "-1"),
    ("--cpu-limit", "0"),
    ("--cpu-limit", "1.5"),
    ("--memory-limit", "0"),
    ("--memory-limit", "lots"),
]


def _main_refused(capsys: pytest.CaptureFixture[str], *arguments: str) -> str:
    """Run the CLI in this process (fast: numbers are refused while parsing); its stderr."""
    try:
        code: object = main(list(arguments))
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    assert code == 2, (code, captured.out[-2000:], captured.err[-2000:])
    return captured.err


@pytest.mark.parametrize(("option", "value"), BAD_NUMBERS)
@pytest.mark.parametrize("command", ["run", "grade", "grade-batch"])
def test_bad_numbers_are_refused_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, option: str, value: str
) -> None:
    if command == "run" and option == "--budget":
        pytest.skip("run has no --budget")
    error = _main_refused(capsys, *_command(command, tmp_path), f"{option}={value}")
    assert f"argument {option}" in error and value in error
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["0", "-2", "nan", "inf", "two"])
def test_bad_jobs_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    error = _main_refused(capsys, *_command("grade-batch", tmp_path), f"--jobs={value}")
    assert "argument --jobs" in error and value in error


def test_bad_numbers_are_refused_in_a_subprocess_too(tmp_path: Path) -> None:
    _refused(cli("grade", "--timeout", "nan"), "argument --timeout", "must be a finite number above 0")


RUBRIC_WEIGHTS = {
    "nan lab weight": 'labs:\n  "3.1": {weight: .nan}\n',
    "inf lab weight": 'labs:\n  "3.1": {weight: .inf}\n',
    "totals overflow": 'labs:\n  "3.1": {weight: 1e308}\n  "3.2": {weight: 1e308}\n',
    "nan tag weight": 'labs:\n  "3.1": {weight: 10, scoring: by-tag, tags: {IR-TEXT: .nan}}\n',
    "inf default weight": 'labs:\n  "3.1": {weight: 10, scoring: by-tag, tags: {IR-TEXT: 1}, default_weight: .inf}\n',
}


@pytest.mark.parametrize("labs", RUBRIC_WEIGHTS.values(), ids=RUBRIC_WEIGHTS.keys())
@pytest.mark.parametrize("command", ["grade", "grade-batch"])
def test_rubric_weights_must_be_finite(tmp_path: Path, command: str, labs: str) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(f"version: 1\nname: bad\n{labs}", encoding="utf-8")
    arguments = [command, *([str(tmp_path)] if command == "grade-batch" else []), "--rubric", str(rubric)]
    _refused(
        cli(*arguments, "--out" if command == "grade-batch" else "--details", str(tmp_path / "out") if command == "grade-batch" else "1"),
        str(rubric),
    )
    assert not (tmp_path / "out").exists()


# -- output paths ------------------------------------------------------------------------------


def test_grade_checks_every_report_path_before_grading_and_keeps_what_was_there(tmp_path: Path, rubric: Path) -> None:
    kept = tmp_path / "report.json"
    kept.write_text("earlier report\n", encoding="utf-8")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    started = time.monotonic()
    result = cli("grade", "--rubric", str(rubric), "--json", str(kept), "--markdown", str(folder))
    _refused(result, "--markdown", "is a folder, but a file is meant")
    assert "pi-conformance grade:" not in result.stdout, "nothing was graded"
    assert time.monotonic() - started < 20
    assert kept.read_text(encoding="utf-8") == "earlier report\n"
    a_file = tmp_path / "plain-file"
    a_file.write_text("x", encoding="utf-8")
    _refused(cli("grade", "--rubric", str(rubric), "--junit", str(a_file / "junit.xml")), "is a file, so no folder can be made")
    _refused(cli("grade", "--rubric", str(rubric), "--json", str(kept), "--gradescope", str(kept)), "both name")
    assert kept.read_text(encoding="utf-8") == "earlier report\n"


def test_grade_writes_reports_into_folders_it_creates(tmp_path: Path, rubric: Path) -> None:
    result = cli("grade", "--rubric", str(rubric), "--json", str(tmp_path / "new" / "deeper" / "report.json"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "new" / "deeper" / "report.json").is_file()


def test_run_checks_its_output_files_first(tmp_path: Path) -> None:
    _refused(cli("run", "--lab", "3.1", "--report-json", str(tmp_path)), "--report-json", "is a folder")
    _refused(cli("run", "--lab", "3.1", "--write-baseline", str(tmp_path)), "--write-baseline", "is a folder")


def test_grade_batch_checks_its_output_folder_first(tmp_path: Path) -> None:
    _, arguments = make_class(tmp_path, {"ann": "ok"})
    a_file = tmp_path / "grades.txt"
    a_file.write_text("keep me\n", encoding="utf-8")
    _refused(cli(*arguments, "--out", str(a_file)), "--out", "is a file, but a folder is meant")
    assert a_file.read_text(encoding="utf-8") == "keep me\n"
    blocked = tmp_path / "blocked"
    (blocked / "gradebook.csv").mkdir(parents=True)
    _refused(cli(*arguments, "--out", str(blocked)), "gradebook.csv is a folder")
    blocked_reports = tmp_path / "blocked-reports"
    blocked_reports.mkdir()
    (blocked_reports / "reports").write_text("", encoding="utf-8")
    _refused(cli(*arguments, "--out", str(blocked_reports)), "reports is a file")


def test_gradebook_merge_checks_its_output_and_needs_shard_metadata(tmp_path: Path) -> None:
    _refused(cli("gradebook-merge", str(tmp_path / "x.csv"), "-o", str(tmp_path)), "--output", "is a folder")
    plain = tmp_path / "plain.csv"
    plain.write_text("submission,status\nann,ok\n", encoding="utf-8")
    _refused(cli("gradebook-merge", str(plain), "-o", str(tmp_path / "merged.csv")), "plain.meta.json")
    assert not (tmp_path / "merged.csv").exists()


# -- input files ---------------------------------------------------------------------------------


def _billion_laughs() -> str:
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    previous = "a"
    for name in "bcdefghi":
        text += f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
        previous = name
    return text + "cases: [*i]\n"


BAD_FILES = {
    "billion-laughs": (_billion_laughs().encode(), "once its aliases are expanded"),
    "deep": (("version: 1\ncases: " + "[" * 990 + "]" * 990 + "\n").encode(), "nested more than 100 levels deep"),
    "deep-mapping": (("version: 1\ncases: " + "{a: " * 990 + "1" + "}" * 990 + "\n").encode(), "nested more than 100 levels deep"),
    "latin-1": (b"version: 1\nname: caf\xe9\n", "not UTF-8"),
}


@pytest.mark.parametrize("name", BAD_FILES)
@pytest.mark.parametrize("use", ["grade --rubric", "grade-batch --rubric", "grade --baseline", "run --baseline"])
def test_bad_rubric_and_baseline_files_are_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, use: str) -> None:
    content, message = BAD_FILES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(content)
    command, option = use.split()
    started = time.monotonic()
    error = _main_refused(capsys, *_command(command, tmp_path), option, str(path))
    assert time.monotonic() - started < 5
    assert str(path) in error and message in error
    assert len(error.strip().splitlines()) == 1, error


def test_a_bad_file_is_one_line_without_traceback_in_a_subprocess_too(tmp_path: Path) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_bytes(BAD_FILES["billion-laughs"][0])
    _refused(cli("grade", "--rubric", str(path)), "once its aliases are expanded")
    _refused(cli("run", "--baseline", str(path)), "once its aliases are expanded")


@pytest.mark.parametrize("name", BAD_FILES)
def test_bad_fixture_files_are_one_problem_each_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, rubric: Path
) -> None:
    content, message = BAD_FILES[name]
    fixtures = tmp_path / "fixtures"
    (fixtures / "ch03").mkdir(parents=True)
    (fixtures / "ch03" / f"{name}.yaml").write_bytes(content)
    started = time.monotonic()
    assert main(["fixtures", "lint", "--fixtures", str(fixtures)]) == 1
    assert message in capsys.readouterr().out
    error = _main_refused(capsys, "grade", "--fixtures", str(fixtures), "--rubric", str(rubric))
    assert "fixtures have problems" in error and message in error
    assert time.monotonic() - started < 5
    run = cli("run", "--fixtures", str(fixtures), timeout=30)  # pytest inside: a process of its own
    assert run.returncode == 1 and message in run.stdout and "INTERNALERROR" not in run.stdout + run.stderr, run.stdout[-2000:]


def test_grade_baseline_with_an_unknown_case_is_stale_as_with_run(tmp_path: Path, rubric: Path) -> None:
    baseline = tmp_path / "known.yaml"
    baseline.write_text("version: 1\ncases:\n  no-such-case: typo\n", encoding="utf-8")
    graded = cli("grade", "--rubric", str(rubric), "--baseline", str(baseline))
    assert graded.returncode == 1
    assert "1 stale" in graded.stdout and "no-such-case is not a case of this suite" in graded.stdout
    ran = cli("run", "--lab", "3.1", "--baseline", str(baseline))
    assert ran.returncode == 1 and "1 stale" in ran.stdout


# -- template fields -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["o'brien", "a b", 'quote"d', "semi;colon", "{path}"])
def test_template_fields_are_one_shell_word_each(tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    impl = impl_for("cmd:prog --dir {path} --name {name}", folder)
    assert shlex.split(impl.removeprefix("cmd:")) == ["prog", "--dir", str(folder.resolve()), "--name", name]
    assert impl_for("pi-course:{path}", folder) == f"pi-course:{folder.resolve()}"
