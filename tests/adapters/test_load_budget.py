"""Imports outside the budget, for any program: a slow import is timed by the load timeout, never by a case.

The program is a ``cmd:`` one in Python (tests/support/fakes/misbehaving.py ``slow-preload``): its
handshake offers ``preload``, and it sleeps before the line that says its modules are loaded, as
a cold import does (TypeScript sources under bun take 0.4-1.3 s). Each case's budget here is
smaller than that import: every case still passes, a case that times out does not make the next
one pay the import again, and an import slower than its own budget is one error naming the import.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from conformance.adapters.process import ProcessAdapter
from conformance.adapters.process_options import ProcessOptions
from conformance.adapters.settings import DEFAULT_LOAD_TIMEOUT_S
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite
from conformance.running.engine import Loop, Policy
from tests.support.cli_runner import cli
from tests.support.paths import REPO

FAKE = str(REPO / "tests" / "support" / "fakes" / "misbehaving.py")
IMPORT_S = 0.8
CASE_TIMEOUT_S = 0.3


def slow_import(*modes: str, load_timeout_s: float = DEFAULT_LOAD_TIMEOUT_S) -> ProcessAdapter:
    argv = [sys.executable, FAKE, f"slow-preload:{IMPORT_S}", *modes]
    return ProcessAdapter(ProcessOptions(argv, env={"PYTHONPATH": str(REPO)}, load_timeout_s=load_timeout_s))


def run_cases(adapter: ProcessAdapter, suite: Suite, ids: list[str]) -> list[Outcome]:
    """The cases in the order given, on one adapter, as every command runs them (retries included)."""
    by_id = {case.id: case for case in suite.cases}
    cases = [by_id[case_id] for case_id in ids]
    return Loop(Policy(timeout_s=CASE_TIMEOUT_S), lambda: slow_import()).run(adapter, cases)


def ids_of(suite: Suite, operation: str, count: int) -> list[str]:
    ids = [case.id for case in suite.cases if case.operation == operation][:count]
    assert len(ids) == count, operation
    return ids


def test_a_slow_import_is_paid_once_and_by_no_case(suite: Suite) -> None:
    adapter = slow_import()
    ids = ids_of(suite, "make_text", 4) + ids_of(suite, "text_of", 4)
    started = time.monotonic()
    outcomes = run_cases(adapter, suite, ids)
    elapsed = time.monotonic() - started
    assert [(outcome.case_id, outcome.message) for outcome in outcomes if outcome.status != "passed"] == []
    assert adapter.starts == 1
    assert IMPORT_S <= elapsed < len(ids) * IMPORT_S / 2, elapsed  # the import once, not once per case


def test_a_case_that_times_out_does_not_make_the_next_pay_the_import(suite: Suite) -> None:
    # text_of hangs: its case times out and the program is killed. The next case's program is
    # started and loaded before that case's clock starts, so it passes within its 0.3 s.
    adapter = slow_import("hang-on:text_of")
    ids = ids_of(suite, "make_text", 2) + ids_of(suite, "text_of", 1) + ids_of(suite, "make_text", 4)[2:]
    outcomes = run_cases(adapter, suite, ids)
    statuses = [outcome.status for outcome in outcomes]
    assert statuses == ["passed", "passed", "failed", "passed", "passed"], [outcome.message for outcome in outcomes]
    assert outcomes[2].timed_out and f"did not return within {CASE_TIMEOUT_S:g} s" in outcomes[2].message
    assert adapter.starts == 2


def test_an_import_slower_than_its_own_budget_is_one_error_naming_the_import(suite: Suite) -> None:
    adapter = slow_import(load_timeout_s=0.4)
    ids = ids_of(suite, "make_text", 3) + ids_of(suite, "text_of", 3)
    started = time.monotonic()
    outcomes = run_cases(adapter, suite, ids)
    elapsed = time.monotonic() - started
    assert [outcome.status for outcome in outcomes] == ["errored"] * len(ids)
    first, *later = (outcome.message for outcome in outcomes)
    assert first.startswith("not run: loading the implementation's modules took longer than 0.4 s, its load timeout (--load-timeout"), first
    assert later == [first] * len(later)  # one cause, said once
    # One start, one load timeout: no case paid it again, and nothing was retried. Each case
    # paying it would take at least len(ids) * 0.4 s however fast the machine; one payment
    # stays far below that however loaded it is (1.2 s seen with eight busy workers).
    assert adapter.starts == 1 and elapsed < len(ids) * 0.4, elapsed


def test_the_load_timeout_is_a_setting_of_run(tmp_path: Path) -> None:
    program = f"cmd:{sys.executable} {FAKE} slow-preload:{IMPORT_S}"
    args = ["run", "--impl", program, "--lab", "3.1", "-k", "make-text", "--timeout", str(CASE_TIMEOUT_S), "--sandbox", "none"]
    passing = cli(*args, env={"PYTHONPATH": str(REPO)}, timeout=120)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    too_short = cli(*args, "--load-timeout", "0.4", env={"PYTHONPATH": str(REPO)}, timeout=120)
    assert too_short.returncode == 1, too_short.stdout + too_short.stderr
    assert "took longer than 0.4 s, its load timeout (--load-timeout" in too_short.stdout, too_short.stdout
    assert "failures by cause: 4 cases in 1 group" in too_short.stdout and "4 errored" in too_short.stdout, too_short.stdout
