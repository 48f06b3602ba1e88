"""Chapter 05 has teeth: each one-bug variant of the provider adapter fails its clause's cases in its own lab, and nothing else."""

from __future__ import annotations

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from tests.support.provider_variants import PROVIDER_VARIANTS, ProviderVariant


def test_every_lab_of_chapter_05_has_variants() -> None:
    assert len({variant.name for variant in PROVIDER_VARIANTS}) == len(PROVIDER_VARIANTS)
    assert {variant.lab for variant in PROVIDER_VARIANTS} == {"5.1", "5.2", "5.3"}
    assert {variant.clause.split("-")[1] for variant in PROVIDER_VARIANTS} == {"MSG", "TOOLS", "MODEL", "HTTP", "SSE", "KEY"}


@pytest.mark.parametrize("variant", PROVIDER_VARIANTS, ids=[variant.name for variant in PROVIDER_VARIANTS])
def test_variant_fails_exactly_cases_of_its_clause_in_its_lab(variant: ProviderVariant, suite: Suite, cases_by_id: dict[str, Case]) -> None:
    """The named case fails with a message at the broken key; every case that fails is of its lab and cites its clause."""
    adapter = BindingAdapter(variant.binding, name=variant.name)
    outcomes = {case.id: run_alone(adapter, case) for case in suite.cases if case.chapter == "05"}
    failing = {case_id for case_id, outcome in outcomes.items() if outcome.status != "passed"}
    named = outcomes[variant.failing_case]
    assert named.status == "failed", named.message
    assert variant.message_fragment in named.message
    outside = sorted(
        case_id for case_id in failing if variant.clause not in cases_by_id[case_id].clauses or cases_by_id[case_id].lab != variant.lab
    )
    assert outside == [], f"{variant.name} also fails cases of another clause or lab"
    assert all(outcomes[case_id].status == "failed" for case_id in failing), "a bug is a failure, never an error"


@pytest.mark.parametrize("variant", PROVIDER_VARIANTS[::4], ids=[variant.name for variant in PROVIDER_VARIANTS[::4]])
def test_variant_costs_nothing_in_other_chapters(variant: ProviderVariant, suite: Suite) -> None:
    adapter = BindingAdapter(variant.binding, name=variant.name)
    others = [case for case in suite.cases if case.chapter in {"03", "04", "06"}][::9]
    assert [case.id for case in others if run_alone(adapter, case).status != "passed"] == []
