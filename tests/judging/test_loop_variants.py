"""Chapter 07 has teeth: each one-bug variant of the agent loop fails its clause's cases, in its lab, and nothing else."""

from __future__ import annotations

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from tests.support.loop_variants import LOOP_VARIANTS, LoopVariant


def test_every_lab_of_chapter_07_has_variants() -> None:
    assert len({variant.name for variant in LOOP_VARIANTS}) == len(LOOP_VARIANTS)
    assert {variant.lab for variant in LOOP_VARIANTS} == {"7.1", "7.2", "7.3", "7.4", "7.5"}


@pytest.mark.parametrize("variant", LOOP_VARIANTS, ids=[variant.name for variant in LOOP_VARIANTS])
def test_variant_fails_exactly_cases_of_its_clause(variant: LoopVariant, suite: Suite, cases_by_id: dict[str, Case]) -> None:
    """The named case fails with a message at the broken key; every failing case cites the clause and is of its lab."""
    adapter = BindingAdapter(variant.binding, name=variant.name)
    outcomes = {case.id: run_alone(adapter, case) for case in suite.cases if case.chapter == "07"}
    failing = {case_id for case_id, outcome in outcomes.items() if outcome.status != "passed"}
    named = outcomes[variant.failing_case]
    assert named.status == "failed", named.message
    assert variant.message_fragment in named.message
    outside = sorted(case_id for case_id in failing if variant.clause not in cases_by_id[case_id].clauses)
    why = {case_id: outcomes[case_id].message[:200] for case_id in failing}
    assert outside == [], f"{variant.name} also fails cases that do not cite {variant.clause}: {why}"
    other_labs = sorted(case_id for case_id in failing if cases_by_id[case_id].lab != variant.lab)
    assert other_labs == [], f"{variant.name} also fails cases outside lab {variant.lab}"
    assert all(outcomes[case_id].status == "failed" for case_id in failing), "a bug is a failure, never an error"


def test_a_sequential_batch_is_reported_as_stalled_not_as_a_hang(suite: Suite) -> None:
    """The gated batch against a loop that awaits its calls one by one: a divergence at ``stalled``, well within the timeout."""
    variant = next(variant for variant in LOOP_VARIANTS if variant.name == "sequential-batch")
    case = next(case for case in suite.cases if case.id == "loop-course-gated-batch")
    outcome = run_alone(BindingAdapter(variant.binding, name=variant.name), case)
    assert outcome.status == "failed"
    assert 'stalled: expected null but got {"step": 1, "waiting_for": "tool fast to start"}' in outcome.message


def test_loop_variants_cost_nothing_in_chapter_06(suite: Suite) -> None:
    adapter = BindingAdapter(LOOP_VARIANTS[0].binding, name=LOOP_VARIANTS[0].name)
    earlier = [case for case in suite.cases if case.chapter == "06"][::5]
    assert [case.id for case in earlier if run_alone(adapter, case).status != "passed"] == []
