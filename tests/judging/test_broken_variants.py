"""The suite has teeth: every broken variant of the reference fails, with a message naming the bug."""

from __future__ import annotations

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.adapters.reference import create as reference_adapter
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from tests.support.variants import VARIANTS, Variant


def test_there_are_at_least_twelve_variants() -> None:
    assert len(VARIANTS) >= 12
    assert len({variant.name for variant in VARIANTS}) == len(VARIANTS)


@pytest.mark.parametrize("variant", VARIANTS, ids=[variant.name for variant in VARIANTS])
def test_variant_fails_its_case_with_a_pointed_message(variant: Variant, cases_by_id: dict[str, Case]) -> None:
    case = cases_by_id[variant.failing_case]
    assert run_alone(reference_adapter(), case).status == "passed", "control: the reference passes this case"
    outcome = run_alone(BindingAdapter(variant.binding, name=variant.name), case)
    assert outcome.status == "failed", outcome.message
    assert variant.message_fragment in outcome.message


@pytest.mark.parametrize("variant", VARIANTS, ids=[variant.name for variant in VARIANTS])
def test_variant_fails_only_its_own_lab_or_later(variant: Variant, suite: Suite) -> None:
    """A bug in one lab must not spill into earlier labs: partial credit stays meaningful."""
    adapter = BindingAdapter(variant.binding, name=variant.name)
    earlier = [case for case in suite.cases if case.lab < variant.lab]
    failing = [case.id for case in earlier if run_alone(adapter, case).status != "passed"]
    assert failing == []
