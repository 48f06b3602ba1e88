"""The bundled fixtures: complete, loadable, covering every clause, with expected values that are valid IR."""

from __future__ import annotations

import pytest

from conformance.authoring.coverage import PENDING_MARKER
from conformance.authoring.expected_values import expected_ir, expected_ir_problems
from conformance.loading.loader import Suite
from conformance.model.cases import LABS
from conformance.model.clauses import load_clauses


def test_at_least_150_cases_across_all_labs(suite: Suite) -> None:
    assert len(suite.cases) >= 150
    assert {case.lab for case in suite.cases} == set(LABS)
    assert suite.broken == []


def test_every_clause_is_checked_by_some_case(suite: Suite) -> None:
    # A clause marked *cases pending* (chapter 09's Agent, whose scenarios are to come) needs none yet.
    checked = {clause for case in suite.cases for clause in case.clauses}
    in_force = {clause.id for clause in load_clauses().values() if PENDING_MARKER not in clause.text}
    assert sorted(in_force - checked) == []


def test_expected_ir_values_are_valid_ir(suite: Suite) -> None:
    # The check is lint's (fixtures lint reports each such value at its line); here it runs on the bundled suite.
    assert sum(1 for case in suite.cases for _ in expected_ir(case)) > 400
    assert [str(problem) for problem in expected_ir_problems(suite.cases)] == []


@pytest.mark.parametrize("operation", ["text_of", "current_system_message", "event_stream", "scripted_model"])
def test_every_operation_family_is_present(suite: Suite, operation: str) -> None:
    assert any(case.operation == operation for case in suite.cases)
