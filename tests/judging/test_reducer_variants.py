"""Chapter 09's reducer has teeth: each one-bug variant fails its clause's cases and nothing else."""

from __future__ import annotations

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from tests.support.clause_variants import assert_fails_only_its_clause, chapter_outcomes
from tests.support.reducer_variants import REDUCER_VARIANTS, ReducerVariant


def test_every_reducer_clause_has_a_variant() -> None:
    assert len({variant.name for variant in REDUCER_VARIANTS}) == len(REDUCER_VARIANTS)
    assert {variant.clause for variant in REDUCER_VARIANTS} == {f"AGENT-STATE-{number}" for number in range(1, 9)}


@pytest.mark.parametrize("variant", REDUCER_VARIANTS, ids=[variant.name for variant in REDUCER_VARIANTS])
def test_variant_fails_exactly_cases_of_its_clause(variant: ReducerVariant, suite: Suite, cases_by_id: dict[str, Case]) -> None:
    """The named case fails with a message at the broken key; every case that fails cites the variant's clause, in lab 9.1."""
    outcomes = chapter_outcomes(variant.binding, variant.name, suite, "09")
    failing = assert_fails_only_its_clause(outcomes, variant.clause, variant.failing_case, variant.message_fragment, cases_by_id)
    assert {cases_by_id[case_id].lab for case_id in failing} == {"9.1"}


@pytest.mark.parametrize("variant", REDUCER_VARIANTS, ids=[variant.name for variant in REDUCER_VARIANTS])
def test_variant_costs_nothing_in_other_chapters(variant: ReducerVariant, suite: Suite) -> None:
    adapter = BindingAdapter(variant.binding, name=variant.name)
    others = [case for case in suite.cases if case.chapter != "09"][::9]
    assert [case.id for case in others if run_alone(adapter, case).status != "passed"] == []
