"""Chapter 06 has teeth: each one-bug variant of the tool contract fails its clause's cases and nothing else."""

from __future__ import annotations

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from tests.support.tool_variants import TOOL_VARIANTS, ToolVariant


def test_every_lab_of_chapter_06_has_variants() -> None:
    assert len({variant.name for variant in TOOL_VARIANTS}) == len(TOOL_VARIANTS)
    assert {variant.clause.split("-")[1] for variant in TOOL_VARIANTS} == {"VAL", "SCHEMA", "REG", "EXEC"}


@pytest.mark.parametrize("variant", TOOL_VARIANTS, ids=[variant.name for variant in TOOL_VARIANTS])
def test_variant_fails_exactly_cases_of_its_clause(variant: ToolVariant, suite: Suite, cases_by_id: dict[str, Case]) -> None:
    """The named case fails with a message at the broken key; every case that fails cites the variant's clause."""
    adapter = BindingAdapter(variant.binding, name=variant.name)
    outcomes = {case.id: run_alone(adapter, case) for case in suite.cases if case.chapter == "06"}
    failing = {case_id for case_id, outcome in outcomes.items() if outcome.status != "passed"}
    named = outcomes[variant.failing_case]
    assert named.status == "failed", named.message
    assert variant.message_fragment in named.message
    outside = sorted(case_id for case_id in failing if variant.clause not in cases_by_id[case_id].clauses)
    assert outside == [], f"{variant.name} also fails cases that do not cite {variant.clause}"
    assert all(outcomes[case_id].status == "failed" for case_id in failing), "a bug is a failure, never an error"


@pytest.mark.parametrize("variant", TOOL_VARIANTS, ids=[variant.name for variant in TOOL_VARIANTS])
def test_variant_costs_nothing_in_earlier_chapters(variant: ToolVariant, suite: Suite) -> None:
    adapter = BindingAdapter(variant.binding, name=variant.name)
    earlier = [case for case in suite.cases if case.chapter in {"03", "04"}][::7]
    assert [case.id for case in earlier if run_alone(adapter, case).status != "passed"] == []
