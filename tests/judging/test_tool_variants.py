"""Chapter 06 has teeth: each one-bug variant of the tool contract fails its clause's cases and nothing else."""

from __future__ import annotations

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from tests.support.clause_variants import assert_fails_only_its_clause, chapter_outcomes
from tests.support.tool_variants import TOOL_VARIANTS, ToolVariant


def test_every_lab_of_chapter_06_has_variants() -> None:
    assert len({variant.name for variant in TOOL_VARIANTS}) == len(TOOL_VARIANTS)
    assert {variant.clause.split("-")[1] for variant in TOOL_VARIANTS} == {"VAL", "SCHEMA", "REG", "EXEC"}


@pytest.mark.parametrize("variant", TOOL_VARIANTS, ids=[variant.name for variant in TOOL_VARIANTS])
def test_variant_fails_exactly_cases_of_its_clause(variant: ToolVariant, suite: Suite, cases_by_id: dict[str, Case]) -> None:
    """The named case fails with a message at the broken key; every case that fails cites the variant's clause."""
    outcomes = chapter_outcomes(variant.binding, variant.name, suite, "06")
    assert_fails_only_its_clause(outcomes, variant.clause, variant.failing_case, variant.message_fragment, cases_by_id)


@pytest.mark.parametrize("variant", TOOL_VARIANTS, ids=[variant.name for variant in TOOL_VARIANTS])
def test_variant_costs_nothing_in_earlier_chapters(variant: ToolVariant, suite: Suite) -> None:
    adapter = BindingAdapter(variant.binding, name=variant.name)
    earlier = [case for case in suite.cases if case.chapter in {"03", "04"}][::7]
    assert [case.id for case in earlier if run_alone(adapter, case).status != "passed"] == []
