"""Waiting steps end when the implementation's event loop is idle, and only then (spec/protocol.md, Settling)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from conformance.adapters.pi_course import pi_course_adapter
from conformance.adapters.settings import ImplSettings
from conformance.loading.loader import Suite
from conformance.running.engine import run_alone
from tests.support.paths import REPO
from tests.support.requirements import needs_node

pytestmark = needs_node
CORRECT = REPO / "tests" / "support" / "js" / "course-correct"
MODEL = Path("packages/pi-course/dist/src/scripted-model.js")


def test_a_producer_on_a_timer_is_waited_for_not_declared_idle(tmp_path: Path, suite: Suite) -> None:
    """A live timer keeps the loop busy: the wait goes on until the timer's turn is played."""
    project = tmp_path / "timer-producer"
    shutil.copytree(CORRECT, project)
    model = project / MODEL
    text = model.read_text(encoding="utf-8")
    assert text.count("queueMicrotask(() => {") == 1
    model.write_text(text.replace("queueMicrotask(() => {", "setTimeout(() => {", 1).replace("\n    });\n", "\n    }, 30);\n", 1))
    adapter = pi_course_adapter(str(project), ImplSettings())
    try:
        cases = [case for case in suite.cases if case.id.startswith("sm-text-")]
        outcomes = [run_alone(adapter, case) for case in cases]
    finally:
        adapter.close()
    assert cases and all(outcome.status == "passed" for outcome in outcomes), [o.message for o in outcomes if o.status != "passed"]


def _model_waiting_on(tmp_path: Path, name: str, wait: str) -> Path:
    """course-correct whose scripted-model.js module waits on ``wait`` (top-level await) before its exports."""
    project = tmp_path / name
    shutil.copytree(CORRECT, project)
    model = project / MODEL
    text = model.read_text(encoding="utf-8")
    anchor = "export const EXHAUSTED_MESSAGE"
    assert text.count(anchor) == 1
    model.write_text(text.replace(anchor, f"await {wait};\n{anchor}"), encoding="utf-8")
    return project


def test_an_import_that_never_resolves_is_answered_hung_at_once(tmp_path: Path, suite: Suite) -> None:
    """Nothing is left to run while the import waits: each case is "hung" without waiting for its timeout."""
    project = _model_waiting_on(tmp_path, "never", "new Promise(() => {})")
    adapter = pi_course_adapter(str(project), ImplSettings())
    cases = [case for case in suite.cases if case.operation == "scripted_model"]
    started = time.monotonic()
    try:
        outcomes = [run_alone(adapter, case, timeout_s=5) for case in cases]
    finally:
        adapter.close()
    elapsed = time.monotonic() - started
    assert cases and all(outcome.hung and outcome.status == "failed" for outcome in outcomes)
    assert outcomes[0].message.startswith("hung: scripted_model never finishes: it is still pending while the event loop is idle")
    assert not any(outcome.timed_out for outcome in outcomes)
    # One timeout alone would be 5 s: every case was answered long before its own.
    assert elapsed < 5, f"{len(cases)} hung cases took {elapsed:.1f} s"


def test_an_import_waiting_on_a_timer_is_waited_for_not_declared_hung(tmp_path: Path, suite: Suite) -> None:
    """A live timer may still settle the import: the operation is waited for, and passes."""
    project = _model_waiting_on(tmp_path, "slow", "new Promise((resolve) => setTimeout(resolve, 300))")
    adapter = pi_course_adapter(str(project), ImplSettings())
    case = next(case for case in suite.cases if case.id.startswith("sm-text-"))
    try:
        outcome = run_alone(adapter, case, timeout_s=5)
    finally:
        adapter.close()
    assert outcome.status == "passed", outcome.message
