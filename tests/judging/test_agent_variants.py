"""Chapter 09's Agent has teeth: each one-bug variant fails its clause's cases, in its lab, and nothing else."""

from __future__ import annotations

import pytest

from conformance.loading.loader import Suite
from conformance.model.cases import Case
from tests.support.agent_variants import AGENT_VARIANTS, AgentVariant
from tests.support.clause_variants import assert_fails_only_its_clause, chapter_outcomes


def test_variants_have_distinct_names() -> None:
    assert len({variant.name for variant in AGENT_VARIANTS}) == len(AGENT_VARIANTS)


@pytest.mark.parametrize("variant", AGENT_VARIANTS, ids=[variant.name for variant in AGENT_VARIANTS])
def test_variant_fails_exactly_cases_of_its_clause(variant: AgentVariant, suite: Suite, cases_by_id: dict[str, Case]) -> None:
    """The named case fails with a message at the broken key; every case that fails cites the variant's clause, in its lab."""
    outcomes = chapter_outcomes(variant.binding, variant.name, suite, "09")
    failing = assert_fails_only_its_clause(outcomes, variant.clause, variant.failing_case, variant.message_fragment, cases_by_id)
    assert variant.lab in {cases_by_id[case_id].lab for case_id in failing}
    assert {cases_by_id[case_id].lab for case_id in failing} <= {variant.lab, *variant.also_labs}
