"""Chapter 09's Agent in a private set (issue 32, item 6): labs 9.2-9.5 drawn by :mod:`conformance.fuzz.strategies_agent`.

The drawn ``run_agent`` scenarios are valid fixture cases the reference passes, stably and
without a stall; each kind of scenario is drawn; the clauses a case cites are section 11's; and
a one-bug variant of the reference Agent (tests/support/agent_variants.py) fails only private
cases that cite its clause, in its lab (or the labs the variant names for its clause's evidence).
How many variants the private cases of their lab catch is measured and bounded.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.adapters.interface import Adapter
from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.grading.grader import prepare
from conformance.grading.rubric import parse_rubric
from conformance.grading.scoring import Score, score
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from conformance.running.engine import run_alone
from tests.support.agent_variants import AGENT_VARIANTS, AgentVariant
from tests.support.fakes.lookup_table import LookupTable, record
from tests.support.private_sets import loaded_cases, problems_besides_other_labs, reference_failures, write_labs_set

RUN_LABS = ("9.2", "9.3", "9.4", "9.5")
PER_LAB = 12
#: The spec's section 11 clauses a drawn Agent case may cite (11.2 to 11.6).
FAMILIES = ("AGENT-RUN-", "AGENT-SUB-", "AGENT-COPY-", "AGENT-ABORT-", "AGENT-QUEUE-", "AGENT-LOOP-")


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private set of labs 9.2-9.5 only, 12 cases each, written as ``private-set`` writes it."""
    return write_labs_set(RUN_LABS, "tests/fuzz/test_fuzz_agent_runs.py", PER_LAB, tmp_path_factory.mktemp("agent-runs"))


@pytest.fixture(scope="module")
def run_cases(runs_dir: Path) -> list[Case]:
    return loaded_cases(runs_dir)


@pytest.fixture(scope="module")
def failures(run_cases: list[Case]) -> dict[str, list[Case]]:
    """The private cases each variant fails (run once for the module)."""
    found: dict[str, list[Case]] = {}
    for variant in AGENT_VARIANTS:
        adapter = BindingAdapter(variant.binding, name=variant.name)
        found[variant.name] = [case for case in run_cases if run_alone(adapter, case).status != "passed"]
    return found


def test_the_cases_lint_clean_and_the_reference_passes_them(runs_dir: Path, run_cases: list[Case]) -> None:
    assert problems_besides_other_labs(runs_dir, RUN_LABS) == []
    assert reference_failures(run_cases) == []


def test_each_lab_gets_its_cases_and_none_expects_a_stall(run_cases: list[Case]) -> None:
    assert Counter(case.lab for case in run_cases) == dict.fromkeys(RUN_LABS, PER_LAB)
    assert {(case.operation, case.chapter) for case in run_cases} == {("run_agent", "09")}
    # Gates, held turns and awaited events order every scenario: the reference never waits in vain.
    assert all(case.expect is not None and case.expect["stalled"] is None for case in run_cases)
    reasons = {_ending(outcome) for case in run_cases if case.expect is not None for outcome in _prompts(case.expect.get("prompts"))}
    # A run that stops, one that fails, one aborted, a busy prompt (a step limit is drawn now and then).
    assert {"stop", "error", "aborted", "rejected"} <= reasons, reasons


def test_every_cited_clause_is_a_section_11_clause_and_each_is_cited(run_cases: list[Case]) -> None:
    spec = load_clauses()
    for case in run_cases:
        assert set(case.clauses) <= set(spec), case.id
        assert all(clause.startswith(FAMILIES) for clause in case.clauses), (case.id, case.clauses)
    cited = {clause for case in run_cases for clause in case.clauses}
    wanted = {clause for clause in spec if clause.startswith(FAMILIES)}
    assert wanted <= cited, sorted(wanted - cited)


def _prompts(prompts: JsonValue) -> list[JsonObject]:
    return [outcome for outcome in prompts.values() if isinstance(outcome, dict)] if isinstance(prompts, dict) else []


def _ending(outcome: JsonObject) -> str:
    """A fulfilled prompt's reason, else its status (``rejected``)."""
    result = outcome.get("result")
    return str(result.get("reason")) if isinstance(result, dict) else str(outcome.get("status"))


@pytest.mark.parametrize("variant", AGENT_VARIANTS, ids=[variant.name for variant in AGENT_VARIANTS])
def test_a_one_bug_variant_fails_only_private_cases_of_its_clause_in_its_lab(
    variant: AgentVariant, failures: dict[str, list[Case]]
) -> None:
    # Each lab's scenarios keep to its own controls (only lab 9.3 subscribers observe or mutate,
    # only lab 9.4 aborts, only lab 9.5 queues): a bug costs its own lab's points. The labs a
    # variant names besides its own are those where the course's evidence for its clause sits.
    labs = {variant.lab, *variant.also_labs}
    outside = [
        (case.id, case.lab, case.clauses) for case in failures[variant.name] if variant.clause not in case.clauses or case.lab not in labs
    ]
    assert outside == [], f"{variant.name} fails private cases that do not cite {variant.clause} in lab {variant.lab}"


def test_the_private_cases_of_their_lab_catch_most_one_bug_variants(failures: dict[str, list[Case]]) -> None:
    # A lookup table fails every private case; a real bug should fail some too. Measured with this
    # seed's 48 cases (12 a lab): all 21 variants caught. Two other seeds leave one each:
    # subscriber-throw-escapes (a lab-9.3 subscribers scenario whose throw meets an event) and
    # follow-ups-first (steering and a follow-up queued together at a text stop). Before the
    # Agent was drawn, its labs had no private case: all 21 uncaught.
    uncaught = [variant.name for variant in AGENT_VARIANTS if not any(case.lab == variant.lab for case in failures[variant.name])]
    assert len(uncaught) <= UNCAUGHT_AT_MOST, uncaught


UNCAUGHT_AT_MOST = 0


def _graded(adapter: Adapter, runs_dir: Path) -> Score:
    """``adapter``'s score on labs 9.2-9.5 (25 points each, the default ``public_cases: confirmed``), the drawn set held out."""
    context = prepare(parse_rubric({"version": 1, "labs": {lab: {"weight": 25} for lab in RUN_LABS}}), held_out=runs_dir)
    return score(context.rubric, [(case, run_alone(adapter, case)) for case in context.cases if context.rubric.selects(case)])


def test_with_the_drawn_cases_held_out_a_table_of_public_answers_earns_nothing_in_labs_9_2_to_9_5(runs_dir: Path) -> None:
    # Issue 32's "done when" for the Agent's labs: before run_agent was drawn, a private set had
    # no case in them, and a table of the 46 public answers earned 100 of these 100 points (measured
    # with a held-out set of lab 3.1 only: its labs are unconfirmed, so their public cases count).
    table = LookupTable(record([case for case in load_suite().cases if case.lab in RUN_LABS]))
    cheat = _graded(table, runs_dir)
    assert all(graded.passed for graded in cheat.cases if not graded.held_out)  # every public answer replayed
    assert not any(graded.passed for graded in cheat.cases if graded.held_out)  # no drawn input known
    skeleton = Adapter()
    skeleton.name = "skeleton"
    assert cheat.points == 0 and cheat.points <= _graded(skeleton, runs_dir).points
