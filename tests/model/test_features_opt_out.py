"""Feature opt-outs (``--without-feature``, the handshake's ``unclaimed_features``) and hints for porters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conformance.feedback.failure_report import COURSE_HINT_MARKER, failure_report, porter_hint
from conformance.judging.outcome import Divergence, Outcome
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from tests.support.cli_runner import cli
from tests.support.paths import REPO


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return cli("run", *args)


def with_feature(suite: Suite, name: str) -> list[str]:
    return [case.id for case in suite.cases if case.profile == "course" and name in case.features]


def test_without_feature_skips_its_cases_counted_apart_and_the_run_passes(tmp_path: Path, suite: Suite) -> None:
    expected = with_feature(suite, "js-number-text")
    assert expected
    report = tmp_path / "report.json"
    result = run_cli("--without-feature", "js-number-text", "--report-json", str(report))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"0 skipped, {len(expected)} not claimed" in result.stdout
    assert f"{len(expected):>6} x feature js-number-text not claimed" in result.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"]["not_claimed"] == len(expected) and data["summary"]["skipped"] == 0
    unclaimed = [case for case in data["cases"] if case["message"] == "feature js-number-text not claimed"]
    assert sorted(case["id"] for case in unclaimed) == sorted(expected)
    assert all(case["status"] == "skipped" and "js-number-text" in case["features"] for case in unclaimed)


def test_an_unknown_feature_is_a_usage_error_listing_the_valid_ones() -> None:
    result = run_cli("--without-feature", "js-numbers")
    assert result.returncode == 2
    assert "unknown feature 'js-numbers'" in result.stderr and "js-number-text" in result.stderr and "ch02-buffering" in result.stderr


def test_a_program_can_leave_features_unclaimed_in_its_handshake(suite: Suite) -> None:
    expected = with_feature(suite, "preset-raw-arguments")
    server = f"cmd:{sys.executable} -m conformance.server --impl reference --without-feature preset-raw-arguments"
    result = run_cli("--impl", server, "--sandbox", "none", "--env", f"PYTHONPATH={REPO}", "--lab", "4.1", "--lab", "4.2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(expected)} not claimed" in result.stdout and "feature preset-raw-arguments not claimed" in result.stdout


def test_the_pytest_plugin_takes_the_option_too(suite: Suite) -> None:
    expected = with_feature(suite, "ch02-buffering")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "conformance/suite", "-q", "-p", "no:cacheprovider", "--without-feature", "ch02-buffering"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:]
    assert f"{len(expected)} skipped" in result.stdout and f"{len(expected)} not claimed" in result.stdout


# -- hints written for the course's TypeScript code --------------------------------------------------

HINT = (
    "If the first event's type is start where an aborted error is expected, the deferred producer must read the signal. "
    "Look at where scripted-model.ts reads signal.aborted and when the turn is played."
)


def hinted_case(hint: str) -> tuple[Case, Outcome]:
    case = Case("c", "scratch.yaml", 1, "04", "4.2", ("SM-ABORT-1",), "scratch", "scripted_model", {}, steps=({"action": "consume"},))
    case = Case(**{**case.__dict__, "hint": (hint,)})
    outcome = Outcome("c", "failed", "m", 0.0, divergence=Divergence("steps[0].events[0].type", '"error"', '"start"'), step_index=0)
    return case, outcome


def test_porters_see_hints_without_the_sentences_about_course_files() -> None:
    assert porter_hint(HINT) == HINT.split(" Look at")[0]
    assert porter_hint(COURSE_HINT_MARKER + "Look at scripted-model.ts") is None
    assert porter_hint("Only about scripted-model.ts.") is None
    case, outcome = hinted_case(HINT)
    assert "scripted-model.ts" in failure_report(case, outcome, load_clauses())  # the grading path (pi-course:) keeps it
    porter = failure_report(case, outcome, load_clauses(), course_hints=False)
    assert "hint:    If the first event's type is start" in porter and "scripted-model.ts" not in porter
    marked, outcome = hinted_case(COURSE_HINT_MARKER + HINT)
    assert "hint:    If the first event's type" in failure_report(marked, outcome, load_clauses())
    assert "hint:" not in failure_report(marked, outcome, load_clauses(), course_hints=False)
