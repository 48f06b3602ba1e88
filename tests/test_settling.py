"""Waiting steps end when the implementation's event loop is idle, and only then (spec/protocol.md, Settling)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.adapters.pi_course import pi_course_adapter
from conformance.adapters.settings import ImplSettings
from conformance.execution import run_case
from conformance.loader import Suite
from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js on PATH")
CORRECT = REPO / "tests" / "js" / "course-correct"
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
        outcomes = [run_case(adapter, case) for case in cases]
    finally:
        adapter.close()
    assert cases and all(outcome.status == "passed" for outcome in outcomes), [o.message for o in outcomes if o.status != "passed"]
