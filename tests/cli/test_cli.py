"""The pi-conformance command line: selection, summary, JSON report and exit status."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from conformance.loading.loader import load_suite
from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import costly
from tests.support.scratch_cases import GOOD_CASE, HEADER, write


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return cli("run", *args, timeout=120)


def test_reference_passes_a_lab_and_prints_the_summary(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run_cli("--lab", "3.1", "--report-json", str(report))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pi-conformance: reference" in result.stdout
    assert "lab 3.1" in result.stdout and "lab 4.1" not in result.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    assert set(data) == {"summary", "groups", "skipped", "cases"}
    assert data["summary"]["total"] == data["summary"]["passed"] > 0
    assert set(data["summary"]) == {"total", "passed", "failed", "errored", "skipped"}
    first = data["cases"][0]
    fields = {"id", "status", "lab", "chapter", "fixture", "clauses", "features", "message", "divergence", "duration_s"}
    assert set(first) == fields and first["status"] == "passed" and first["divergence"] is None


def test_a_broken_implementation_exits_1_with_the_divergence(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run_cli(
        "--impl", "python:tests.support.variants:textof_mixes_in_tool_names", "-k", "text_of or text-of", "--report-json", str(report)
    )
    assert result.returncode == 1
    assert "clause:  IR-TEXT-1" in result.stdout  # the group's full example
    assert re.search(r"^\[1\] \d+ cases: IR-TEXT-1  text_of value", result.stdout, flags=re.MULTILINE)
    data = json.loads(report.read_text(encoding="utf-8"))
    assert any('"先读取\\nread\\n再回答"' in case["message"] for case in data["cases"])
    assert data["summary"]["failed"] >= 1
    assert all(case["message"] == "" for case in data["cases"] if case["status"] == "passed")


def test_keyword_selection_by_case_id() -> None:
    result = run_cli("-k", "sys-replay-chapter-three-system-messages", "-v")
    assert result.returncode == 0
    assert "1 passed" in result.stdout


def test_no_selected_case_exits_5() -> None:
    result = run_cli("-k", "no-such-case-anywhere")
    assert result.returncode == 5
    assert "no case matches" in result.stderr


def test_unknown_implementation_exits_2() -> None:
    result = run_cli("--impl", "nonsense:thing")
    assert result.returncode == 2
    assert "unknown implementation 'nonsense:thing'" in result.stdout + result.stderr


def test_broken_fixture_is_reported_and_the_rest_still_runs(tmp_path: Path) -> None:
    write(tmp_path, "good.yaml", HEADER + GOOD_CASE)
    write(tmp_path, "bad.yaml", HEADER + GOOD_CASE.replace("scratch-good", "scratch-broken").replace('lab: "3.1"', "lab: 3"))
    report = tmp_path / "report.json"
    result = run_cli("--fixtures", str(tmp_path), "--report-json", str(report))
    assert result.returncode == 1
    statuses = {case["id"]: case["status"] for case in json.loads(report.read_text(encoding="utf-8"))["cases"]}
    assert statuses == {"scratch-good": "passed", "scratch-broken": "errored"}
    assert "bad.yaml:5: lab:" in result.stdout  # the line of the `lab:` key itself


def test_a_hopeless_program_reports_every_case_and_exits_1(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    fake = f"{sys.executable} tests/support/fakes/misbehaving.py exit-immediately"
    started = time.perf_counter()
    result = run_cli("--impl", f"cmd:{fake}", "--env", f"PYTHONPATH={REPO}", "--report-json", str(report))
    assert time.perf_counter() - started < 60
    assert result.returncode == 1
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"]["errored"] == data["summary"]["total"] > 150


@costly
def test_the_reference_passes_over_the_protocol() -> None:
    result = run_cli("--impl", f"cmd:{sys.executable} -m conformance.server --impl reference", "--env", f"PYTHONPATH={REPO}")
    assert result.returncode == 0, result.stdout[-2000:]
    assert "0 failed, 0 errored, 0 skipped" in result.stdout


@costly
def test_the_suite_runs_as_plain_pytest_with_impl_and_lab() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "conformance/suite", "-q", "-p", "no:cacheprovider"]
    broken = subprocess.run(
        [*command, "--impl", "python:tests.support.variants:textof_mixes_in_tool_names", "--lab", "3.1", "-m", "clause_IR_TEXT_1"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    assert broken.returncode == 1
    assert "text-of-fault-experiment-tool-name-excluded" in broken.stdout
    good = subprocess.run([*command, "--lab", "3.2"], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert good.returncode == 0
    lab_32 = sum(1 for case in load_suite().cases if case.lab == "3.2")
    assert f"{lab_32} passed" in good.stdout


def test_the_projects_own_test_runs_list_every_skip_reason(tmp_path: Path) -> None:
    # make test and plain pytest read pyproject.toml's addopts: a skipped test names its reason in the summary.
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\n\ndef test_needs_a_tool() -> None:\n    pytest.skip('the tool is not installed here')\n", encoding="utf-8"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(REPO / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-p",
            "no:xdist",
            "-q",
            "test_skips.py",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^SKIPPED \[1\] test_skips\.py:\d+: the tool is not installed here$", result.stdout, flags=re.MULTILINE), (
        result.stdout
    )
