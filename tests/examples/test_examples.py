"""The minimal adapter the manual shows (docs/checking.md) really works, and is shown as it is."""

from __future__ import annotations

import shutil

from conformance.adapters.process import ProcessAdapter
from conformance.adapters.process_options import ProcessOptions
from conformance.loading.loader import Suite
from conformance.running.engine import run_alone
from tests.support.paths import REPO
from tests.support.requirements import needs_node

NODE = shutil.which("node")
COURSE_TYPES = REPO / "tests" / "support" / "js" / "course-correct" / "packages" / "pi-course" / "dist" / "src" / "types.js"


@needs_node
def test_minimal_adapter_passes_its_operations_and_skips_the_rest(suite: Suite) -> None:
    assert NODE is not None
    adapter = ProcessAdapter(ProcessOptions([NODE, str(REPO / "examples" / "minimal_adapter.mjs"), str(COURSE_TYPES)]))
    try:
        outcomes = [(case.operation, run_alone(adapter, case).status) for case in suite.cases]
    finally:
        adapter.close()
    mine = {"text_of", "current_system_prompt"}
    assert {status for operation, status in outcomes if operation in mine} == {"passed"}
    assert {status for operation, status in outcomes if operation not in mine} == {"skipped"}
    assert (REPO / "examples" / "minimal_adapter.mjs").read_text(encoding="utf-8").count("\n") <= 40


def test_the_manual_shows_the_example_verbatim() -> None:
    page = (REPO / "docs" / "checking.md").read_text(encoding="utf-8")
    shown = page.split("```js\n", 1)[1].split("```", 1)[0]
    example = (REPO / "examples" / "minimal_adapter.mjs").read_text(encoding="utf-8")
    code = "".join(line for line in example.splitlines(keepends=True) if not line.startswith("//"))
    assert shown == code
