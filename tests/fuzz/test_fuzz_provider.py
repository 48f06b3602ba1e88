"""Chapter 05's drawn cases (issue 32, item 6): labs 5.1-5.3 in a private set.

The strategies of :mod:`conformance.fuzz.strategies_provider` and :mod:`.strategies_sse` draw
valid fixture cases the reference passes; the clauses a case cites are spec clauses of its
lab's chapter, and they are the ones its values check: a one-bug variant of the chapter 05
reference (tests/support/provider_variants.py) fails only private cases that cite its clause,
in its own lab.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.fuzz.expect_provider import PROVIDER_LABS
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from conformance.running.engine import run_alone
from tests.support.private_sets import problems_besides_other_labs, reference_failures, write_labs_set
from tests.support.provider_variants import PROVIDER_VARIANTS, ProviderVariant

#: The clause families of each lab: a lab 5.2 case that records its requests cites lab 5.1's too.
LAB_FAMILIES = {"5.1": {"MSG", "TOOLS"}, "5.2": {"MODEL", "MSG", "TOOLS"}, "5.3": {"HTTP", "SSE", "KEY"}}
PER_LAB = 20


@pytest.fixture(scope="module")
def chapter_05_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private set of chapter 05's labs only, 20 cases each, written as ``private-set`` writes it."""
    return write_labs_set(tuple(LAB_FAMILIES), "tests/fuzz/test_fuzz_provider.py", PER_LAB, tmp_path_factory.mktemp("chapter-05"))


@pytest.fixture(scope="module")
def chapter_05_cases(chapter_05_dir: Path) -> list[Case]:
    suite = load_suite(chapter_05_dir)
    assert not suite.broken
    return suite.cases


def test_the_cases_lint_clean_and_the_reference_passes_them(chapter_05_dir: Path, chapter_05_cases: list[Case]) -> None:
    # The folder holds chapter 05 only, so lint says the other labs have no case; nothing else.
    assert problems_besides_other_labs(chapter_05_dir, tuple(LAB_FAMILIES)) == []
    assert reference_failures(chapter_05_cases) == []


def test_each_lab_gets_its_cases_and_lab_5_1_both_operations(chapter_05_cases: list[Case]) -> None:
    assert Counter(case.lab for case in chapter_05_cases) == {lab: PER_LAB for lab in LAB_FAMILIES}
    assert {(case.operation, case.lab) for case in chapter_05_cases} == set(PROVIDER_LABS.items())
    assert {case.chapter for case in chapter_05_cases} == {"05"}


def test_every_cited_clause_is_a_spec_clause_of_the_cases_lab(chapter_05_cases: list[Case]) -> None:
    spec = load_clauses()
    for case in chapter_05_cases:
        assert set(case.clauses) <= set(spec), case.id
        assert {clause.split("-")[1] for clause in case.clauses} <= LAB_FAMILIES[case.lab], (case.id, case.clauses)
    # Each of chapter 05's lab 5.2 and 5.3 clauses is checked by some case (5.1's by the
    # transcript kinds drawn: a small set may miss one).
    cited = {clause for case in chapter_05_cases for clause in case.clauses}
    wanted = {f"PROV-MODEL-{n}" for n in range(1, 13)} - {"PROV-MODEL-8", "PROV-MODEL-12"}
    wanted |= {f"PROV-HTTP-{n}" for n in (1, 2, 3)} | {f"PROV-SSE-{n}" for n in range(1, 6)} | {"PROV-KEY-1", "PROV-MSG-1", "PROV-TOOLS-1"}
    assert wanted <= cited, sorted(wanted - cited)


@pytest.mark.parametrize("variant", PROVIDER_VARIANTS, ids=[variant.name for variant in PROVIDER_VARIANTS])
def test_a_one_bug_variant_fails_only_private_cases_of_its_clause(variant: ProviderVariant, chapter_05_cases: list[Case]) -> None:
    adapter = BindingAdapter(variant.binding, name=variant.name)
    failing = [case for case in chapter_05_cases if run_alone(adapter, case).status != "passed"]
    outside = [(case.id, case.clauses) for case in failing if variant.clause not in case.clauses or case.lab != variant.lab]
    assert outside == [], f"{variant.name} fails private cases that do not cite {variant.clause} in lab {variant.lab}"


def test_the_private_cases_catch_most_one_bug_variants(chapter_05_cases: list[Case]) -> None:
    # A lookup table fails every private case; a real bug should fail some too. Measured with
    # this seed's 60 cases: 17 of the 24 variants caught, 7 not (UNCAUGHT_AT_MOST). Some are out
    # of a drawn set's reach: an empty tool list is a public input (never drawn again), and so is
    # the simplest invalid payload; the others are lab 5.2/5.3 bugs that 20 cases spread over
    # their clauses rarely meet.
    uncaught = []
    for variant in PROVIDER_VARIANTS:
        adapter = BindingAdapter(variant.binding, name=variant.name)
        if all(run_alone(adapter, case).status == "passed" for case in chapter_05_cases if case.lab == variant.lab):
            uncaught.append(variant.name)
    assert len(uncaught) <= UNCAUGHT_AT_MOST, uncaught


UNCAUGHT_AT_MOST = 7
