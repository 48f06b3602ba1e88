"""An oversized answer costs its own case, not the grader's memory or the staff's disk; a grader
failure on one case costs that case, not the submission.

Drills of issue 23 (items 3 and 4). A ``cmd:`` program (``tests/support/fakes/hostile_text.py``)
answers every case of lab 3.1 with about a megabyte: a value of the wrong type (the schema
error used to quote it whole), an observation that is not an object (the protocol error
did), a thrown message, an extra key. ``grade`` runs in a child process whose peak memory
(``ru_maxrss`` from ``wait4``, its descendants included, taken by a small launcher) and reports
are measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.adapters.kinds import parse_impl
from conformance.adapters.settings import ImplSettings
from conformance.common.student_text import Budget
from conformance.farm.job import grade_supervised
from conformance.grading import grader
from conformance.grading.grader import GradeOptions, GradingContext, grade_submission, planned_isolation, prepare
from conformance.grading.rubric import parse_rubric
from conformance.judging.outcome import Outcome
from tests.support.batch_helpers import RUBRIC, rows
from tests.support.cli_runner import cli_env
from tests.support.paths import REPO
from tests.support.requirements import costly

FAKE = REPO / "tests" / "support" / "fakes" / "hostile_text.py"
#: What grading lab 3.1 may cost at most, whatever the answers; it costs about 60 MB with correct ones.
PEAK_MEMORY_MB = 300
#: Each report of one submission, whatever the answers.
REPORT_BYTES = 3 * 1024 * 1024
_CLI = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"


#: Started by a small launcher, not by pytest: a child's peak (``ru_maxrss``) starts at its parent's size
#: at fork and survives exec, so a child of a pytest worker grown to 365 MB "took" 365 MB whatever it did.
_LAUNCHER = """
import json, os, subprocess, sys
process = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open(os.environ["MEASURED_STDERR"], "wb"))
_, status, usage = os.wait4(process.pid, 0)
print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss]))
"""


def grade_measured(argv: list[str], timeout_s: float = 600) -> tuple[int, int, str]:
    """Run ``pi-conformance ARGV`` in a child; its exit status, peak resident memory (MiB, its descendants included), stderr."""
    stderr_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"amplification-{os.getpid()}-{id(argv)}.err"
    env = {**cli_env(), "MEASURED_STDERR": str(stderr_path)}
    launched = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, sys.executable, "-c", _CLI, *argv], cwd=REPO, env=env, capture_output=True, timeout=timeout_s
    )
    assert launched.returncode == 0, launched.stderr.decode(errors="replace")[-3000:]
    code, peak_kib = json.loads(launched.stdout)
    text = stderr_path.read_text(encoding="utf-8", errors="replace")
    stderr_path.unlink()
    return int(code), int(peak_kib) // 1024, text


def test_the_measure_is_the_graders_own_not_its_launchers() -> None:
    # This process may be hundreds of MB by now; a child launched through the small launcher is not.
    ballast = bytearray(400 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page, so it is resident
    code, peak_mb, _ = grade_measured(["--version"])
    del ballast
    assert code == 0 and peak_mb < 150, peak_mb


@costly
@pytest.mark.parametrize("mode", ["big-observation", "big-wrong-type", "big-threw", "big-key"])
def test_a_megabyte_answer_costs_neither_memory_nor_disk(tmp_path: Path, mode: str) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    reports = {name: tmp_path / f"report.{name}" for name in ("markdown", "junit", "json", "gradescope")}
    argv = ["grade", "--impl", f"cmd:{sys.executable} {FAKE} {mode} 1000000", "--rubric", str(rubric)]
    argv += [argument for name, path in reports.items() for argument in (f"--{name}", str(path))]
    code, peak_mb, stderr = grade_measured(argv)
    assert code in (0, 1) and "Traceback" not in stderr, stderr[-3000:]
    assert peak_mb < PEAK_MEMORY_MB, f"grading took {peak_mb} MB"
    for path in reports.values():
        assert path.stat().st_size < REPORT_BYTES, f"{path.name}: {path.stat().st_size} bytes"
    report = json.loads(reports["json"].read_text(encoding="utf-8"))
    assert all(case["status"] != "passed" for case in report["cases"])
    # Each case still says what went wrong, with a short quotation and how much was left out.
    messages = [case["message"] for case in report["cases"]]
    assert all(0 < len(message) < 3000 for message in messages), max(messages, key=len)[:500]
    assert mode == "big-key" or any("more characters]" in message for message in messages)


@costly
def test_a_batch_at_the_line_cap_writes_reports_of_bounded_size(tmp_path: Path) -> None:
    submissions = tmp_path / "submissions"
    for name, mode in (("huge", "big-observation 4000000"), ("thrower", "big-threw 4000000")):
        (submissions / name).mkdir(parents=True)
        (submissions / name / "mode").write_text(mode, encoding="utf-8")
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    out = tmp_path / "out"
    argv = ["grade-batch", str(submissions), "--rubric", str(rubric), "--impl-template", f"cmd:{sys.executable} {FAKE} {{path}}"]
    code, peak_mb, stderr = grade_measured([*argv, "--out", str(out)])
    assert code in (0, 1) and "Traceback" not in stderr, stderr[-3000:]
    assert peak_mb < PEAK_MEMORY_MB, f"grading took {peak_mb} MB"
    written = sum(path.stat().st_size for path in (out / "reports").rglob("*") if path.is_file())
    assert written < 2 * 5 * REPORT_BYTES, f"{written} bytes of reports"
    assert set(rows(out / "gradebook.csv")) == {"huge", "thrower"}


# -- item 4: a grader failure costs one case ---------------------------------------------------------


@pytest.fixture(scope="module")
def lab31() -> GradingContext:
    return prepare(parse_rubric({"version": 1, "name": "lab 3.1", "labs": {"3.1": {"weight": 10}}}, "lab 3.1 only"))


def test_a_grader_error_on_one_case_errors_that_case_only(lab31: GradingContext, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = lab31.cases[3].id
    real = grader.bounded  # what grading keeps of each outcome

    def failing(outcome: Outcome, budget: Budget) -> Outcome:
        if outcome.case_id == victim:
            raise RecursionError("maximum recursion depth exceeded while pruning")
        return real(outcome, budget)

    monkeypatch.setattr(grader, "bounded", failing)
    result = grade_submission("reference", lab31)
    by_id = {graded.case.id: graded.outcome for graded in result.score.cases}
    assert by_id[victim].status == "errored"
    assert by_id[victim].message.startswith("grader error") and "RecursionError" in by_id[victim].message
    assert all(outcome.status == "passed" for case_id, outcome in by_id.items() if case_id != victim)
    assert result.isolation == "in-process"


def test_an_outcome_that_cannot_be_recorded_costs_only_its_case(lab31: GradingContext) -> None:
    recorded: list[Outcome] = []
    victim = lab31.cases[2].id

    def record(outcome: Outcome) -> None:
        if outcome.case_id == victim and not outcome.message.startswith("grader error"):
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        recorded.append(outcome)

    result = grade_submission("reference", lab31, on_outcome=record)
    assert [outcome.case_id for outcome in recorded] == [case.id for case in lab31.cases]
    by_id = {graded.case.id: graded.outcome for graded in result.score.cases}
    assert by_id[victim].status == "errored" and "grader error" in by_id[victim].message
    assert sum(outcome.status == "passed" for outcome in by_id.values()) == len(lab31.cases) - 1


@costly
def test_a_row_the_grader_gave_up_on_names_the_isolation_the_submission_ran_under(lab31: GradingContext, tmp_path: Path) -> None:
    impl = "cmd:sleep 60"  # never answers its handshake: the worker is stopped at the hard limit
    supervised = grade_supervised(parse_impl(impl), "sleeper", lab31, GradeOptions(), tmp_path / "work", limit_s=3.0)
    assert supervised is not None and supervised.result.status == "timed-out"
    assert supervised.result.isolation == planned_isolation(impl, ImplSettings())
