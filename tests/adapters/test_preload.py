"""Imports outside the budget: the Node adapters import the implementation's modules right after the handshake.

A cold import (TypeScript sources under bun, a slow top level) is timed by the adapter's
load timeout, not by the first case's: with a module that takes 0.8 s to import and a case
timeout of 0.5 s, every case passes and the import is paid once.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from conformance.adapters.kinds import resolve_adapter
from conformance.adapters.process import ProcessAdapter
from conformance.adapters.settings import ImplSettings
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite, load_suite
from conformance.running.engine import run_alone
from tests.support.grading_batch import patched_copy
from tests.support.requirements import needs_node

pytestmark = needs_node

IMPORT_S = 0.8
CASE_TIMEOUT_S = 0.5
# A busy loop at the module's top level: the import itself is slow, as a cold one is.
SLOW_TOP_LEVEL = f"{{ const until = Date.now() + {IMPORT_S * 1000:.0f}; while (Date.now() < until) {{}} }}\n"


def test_a_slow_import_is_paid_once_and_by_no_case(tmp_path: Path, suite: Suite) -> None:
    project = tmp_path / "student"
    patched_copy(project, "types.js", "export function text(", SLOW_TOP_LEVEL + "export function text(")
    cases = [case for case in suite.cases if case.lab == "3.1"][:12]
    adapter = resolve_adapter(f"pi-course:{project}", ImplSettings(build=False, sandbox="none"))
    assert isinstance(adapter, ProcessAdapter)
    try:
        started = time.monotonic()
        outcomes = {case.id: run_alone(adapter, case, CASE_TIMEOUT_S) for case in cases}
        elapsed = time.monotonic() - started
    finally:
        adapter.close()
    assert {case_id: outcome.message for case_id, outcome in outcomes.items() if outcome.status != "passed"} == {}
    assert adapter.starts == 1
    assert IMPORT_S <= elapsed < 2 * IMPORT_S + 1, elapsed  # the import once, not once per case


def test_a_module_that_never_finishes_loading_is_charged_once_after_the_load_timeout(tmp_path: Path, suite: Suite) -> None:
    project = tmp_path / "student"
    patched_copy(project, "scripted-model.js", "export const EXHAUSTED_MESSAGE", "while (true) {}\nexport const EXHAUSTED_MESSAGE")
    adapter = resolve_adapter(f"pi-course:{project}", ImplSettings(build=False, sandbox="none"))
    assert isinstance(adapter, ProcessAdapter)
    adapter.options.load_timeout_s = 1.0
    lab_3 = [case for case in suite.cases if case.lab == "3.1"][:3]
    lab_4 = [case for case in suite.cases if case.lab == "4.1"][:3]
    try:
        outcomes = [run_alone(adapter, case, 2.0) for case in (*lab_3, *lab_4)]
    finally:
        adapter.close()
    assert [outcome.status for outcome in outcomes] == ["passed"] * 3 + ["errored"] * 3, [o.message for o in outcomes]
    charged = "no answer within 1 s while loading dist/src/scripted-model.js (the load timeout, --load-timeout)"
    assert all(charged in outcome.message for outcome in outcomes[3:])
    assert adapter.starts == 2


def slow_pi_ai_package(folder: Path, first_line: str = "") -> Path:
    """A pi-ai fork whose import takes 0.8 s (as TypeScript sources under bun do); ``first_line`` opens contentText."""
    folder.mkdir()
    manifest = {"name": "@fork/pi-ai", "version": "0.0.1", "type": "module", "main": "index.js"}
    (folder / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    body = f'export function contentText(content, separator = "\\n") {{\n{first_line}  if (typeof content === "string") return content;\n'
    body += '  return content.filter((block) => block.type === "text").map((block) => block.text).join(separator);\n}\n'
    (folder / "index.js").write_text(SLOW_TOP_LEVEL + body, encoding="utf-8")
    return folder


def content_text_outcomes(package: Path) -> tuple[dict[str, Outcome], ProcessAdapter]:
    """Every content_text case of pi-ai-1 on one adapter of ``package``, one by one, and the adapter (closed)."""
    cases = [case for case in load_suite(profile="pi-ai-1").cases if case.operation == "content_text"]
    adapter = resolve_adapter(f"pi-ai:{package}", ImplSettings(sandbox="none"))
    assert isinstance(adapter, ProcessAdapter) and cases
    try:
        return {case.id: run_alone(adapter, case, CASE_TIMEOUT_S) for case in cases}, adapter
    finally:
        adapter.close()


def test_a_slow_pi_ai_package_is_imported_once_outside_the_cases(tmp_path: Path) -> None:
    outcomes, adapter = content_text_outcomes(slow_pi_ai_package(tmp_path / "pkg"))
    assert {case_id: o.message for case_id, o in outcomes.items() if o.status != "passed"} == {}
    assert adapter.starts == 1


def test_a_pi_ai_case_that_times_out_does_not_make_the_next_pay_the_import(tmp_path: Path) -> None:
    # contentText spins on one separator: that case times out and its process is killed; the next
    # process is started and imports the package before the next case's clock starts.
    package = slow_pi_ai_package(tmp_path / "pkg", '  if (separator === " | ") while (true) {}\n')
    spinning = "pa-content-text-custom-separator"
    outcomes, adapter = content_text_outcomes(package)
    assert outcomes[spinning].timed_out, outcomes[spinning].message
    assert {case_id: o.message for case_id, o in outcomes.items() if o.status != "passed" and case_id != spinning} == {}
    assert adapter.starts == 2 and list(outcomes).index(spinning) < len(outcomes) - 1
