"""A student's module that kills the process while it loads costs one restart, not one per case.

The Node.js adapter says when it starts and finishes loading a module (spec/protocol.md,
"Loading notices"). A death in between is that module's: every later process is told not
to load it, and each case that needs it errors at once with what happened. A death once the
module has loaded stays the case's own.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from conformance.adapters.kinds import resolve_adapter
from conformance.adapters.process import ProcessAdapter
from conformance.adapters.settings import ImplSettings
from conformance.loading.loader import Suite
from conformance.running.engine import run_alone
from tests.support.grading_batch import patched_copy
from tests.support.requirements import needs_node

pytestmark = needs_node

SCRIPTED_MODEL = "dist/src/scripted-model.js"
#: The chapters the course adapter plays (chapter 06 is skipped as not supported until it does).
PLAYED_CHAPTERS = ("03", "04")


def grade_all(project: Path, suite: Suite) -> tuple[ProcessAdapter, dict[tuple[str, str], int], list[str]]:
    adapter = resolve_adapter(f"pi-course:{project}", ImplSettings(build=False, sandbox="none"))
    assert isinstance(adapter, ProcessAdapter)
    try:
        outcomes = [(case, run_alone(adapter, case, 5.0)) for case in suite.cases if case.chapter in PLAYED_CHAPTERS]
    finally:
        adapter.close()
    statuses: Counter[tuple[str, str]] = Counter((case.lab, outcome.status) for case, outcome in outcomes)
    messages = [outcome.message for case, outcome in outcomes if case.operation == "scripted_model"]
    return adapter, dict(statuses), messages


def labs(suite: Suite) -> Counter[str]:
    return Counter(case.lab for case in suite.cases if case.chapter in PLAYED_CHAPTERS)


@pytest.mark.parametrize(
    "crash",
    ["process.exit(3);\n", 'import { writeSync } from "node:fs";\nwriteSync(1, "junk that is not JSON\\n");\n'],
    ids=["exits", "writes-junk-on-stdout"],
)
def test_a_module_that_dies_while_loading_costs_one_restart(crash: str, tmp_path: Path, suite: Suite) -> None:
    project = tmp_path / "student"
    patched_copy(project, "scripted-model.js", "export const EXHAUSTED_MESSAGE", crash + "export const EXHAUSTED_MESSAGE")
    adapter, statuses, messages = grade_all(project, suite)
    count = labs(suite)
    assert statuses == {
        ("3.1", "passed"): count["3.1"],
        ("3.2", "passed"): count["3.2"],
        ("4.1", "errored"): count["4.1"],
        ("4.2", "errored"): count["4.2"],
    }
    # The first process, dead while it preloaded the module, and the one that is told not to load it:
    # no case paid for the death, and every case that needs the module says what happened.
    assert adapter.starts == 2
    assert all(f"while loading {SCRIPTED_MODEL} (in an earlier process; the module is not loaded again" in m for m in messages)


def test_a_death_after_the_module_loaded_is_each_cases_own(tmp_path: Path, suite: Suite) -> None:
    # Dies when a ScriptedModel is made, after its module loaded.
    project = tmp_path / "student"
    patched_copy(project, "scripted-model.js", "  constructor(turns) {\n", "  constructor(turns) {\n    process.exit(4);\n")
    adapter, _, messages = grade_all(project, suite)
    assert all("exited with status 4 during scripted_model" in m and "while loading" not in m for m in messages[:3])
    assert adapter.starts > 3  # each case that got to run died on its own
