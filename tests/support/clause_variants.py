"""The proof a one-bug variant of a chapter's reference gives: it fails its named case, and only cases of its clause.

Shared by the chapter 06 and chapter 09 variant tests (``tests/judging/test_tool_variants.py``,
``tests/judging/test_reducer_variants.py``).
"""

from __future__ import annotations

from typing import Any

from conformance.adapters.binding import BindingAdapter
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone


def chapter_outcomes(binding: Any, name: str, suite: Suite, chapter: str) -> dict[str, Outcome]:
    """Every case of ``chapter`` run alone against ``binding``, by case id."""
    adapter = BindingAdapter(binding, name=name)
    return {case.id: run_alone(adapter, case) for case in suite.cases if case.chapter == chapter}


def assert_fails_only_its_clause(
    outcomes: dict[str, Outcome], clause: str, failing_case: str, fragment: str, cases_by_id: dict[str, Case]
) -> set[str]:
    """The named case fails with ``fragment`` in its message; every case that fails cites ``clause`` and fails (never errs).

    Returns the ids of the failing cases, for checks of their own (their labs).
    """
    failing = {case_id for case_id, outcome in outcomes.items() if outcome.status != "passed"}
    named = outcomes[failing_case]
    assert named.status == "failed", named.message
    assert fragment in named.message
    outside = sorted(case_id for case_id in failing if clause not in cases_by_id[case_id].clauses)
    assert outside == [], f"the variant also fails cases that do not cite {clause}"
    assert all(outcomes[case_id].status == "failed" for case_id in failing), "a bug is a failure, never an error"
    return failing
