"""Chapters 07 and 09's drawn cases (issue 32, item 6): labs 7.1-7.5 and 9.1 in a private set.

The strategies of :mod:`conformance.fuzz.strategies_loop` and :mod:`.strategies_reducer` draw
valid fixture cases the reference passes, stably and without a stall; the clauses a case cites
are spec clauses of its chapter, and a one-bug variant of the reference's loop or reducer
(tests/support/loop_variants.py, reducer_variants.py) fails only private cases that cite its
clause. How many variants the private cases of their lab catch is measured and bounded.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.adapters.course_chapters import detect_chapter
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from conformance.running.engine import run_alone
from tests.support.cli_runner import cli
from tests.support.js_variants import JS, ensure_generated
from tests.support.loop_variants import LOOP_VARIANTS
from tests.support.private_sets import loaded_cases, problems_besides_other_labs, reference_failures, write_labs_set
from tests.support.reducer_variants import REDUCER_VARIANTS
from tests.support.requirements import needs_node

AGENT_LABS = ("7.1", "7.2", "7.3", "7.4", "7.5", "9.1")
PER_LAB = 12
#: Every variant as (name, binding, clause, lab): the reducer's are all lab 9.1's.
VARIANTS = [(variant.name, variant.binding, variant.clause, variant.lab) for variant in LOOP_VARIANTS] + [
    (variant.name, variant.binding, variant.clause, "9.1") for variant in REDUCER_VARIANTS
]


@pytest.fixture(scope="module")
def agent_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private set of chapters 07 and 09's labs only, 12 cases each, written as ``private-set`` writes it."""
    return write_labs_set(AGENT_LABS, "tests/fuzz/test_fuzz_agent.py", PER_LAB, tmp_path_factory.mktemp("agent"))


@pytest.fixture(scope="module")
def agent_cases(agent_dir: Path) -> list[Case]:
    return loaded_cases(agent_dir)


@pytest.fixture(scope="module")
def failures(agent_cases: list[Case]) -> dict[str, list[Case]]:
    """The private cases each variant fails (run once for the module)."""
    found: dict[str, list[Case]] = {}
    for name, binding, _, lab in VARIANTS:
        adapter = BindingAdapter(binding, name=name)
        found[name] = [case for case in agent_cases if case.chapter == f"0{lab[0]}" and run_alone(adapter, case).status != "passed"]
    return found


def test_the_cases_lint_clean_and_the_reference_passes_them(agent_dir: Path, agent_cases: list[Case]) -> None:
    assert problems_besides_other_labs(agent_dir, AGENT_LABS) == []
    assert reference_failures(agent_cases) == []


def test_each_lab_gets_its_cases_and_no_loop_case_expects_a_stall(agent_cases: list[Case]) -> None:
    assert Counter(case.lab for case in agent_cases) == dict.fromkeys(AGENT_LABS, PER_LAB)
    assert {(case.operation, case.chapter) for case in agent_cases} == {("run_agent_loop", "07"), ("reduce_agent_state", "09")}
    # Gates and awaited events order every drawn batch: the reference never waits in vain.
    loops = [case for case in agent_cases if case.operation == "run_agent_loop"]
    assert all(case.expect is not None and case.expect["stalled"] is None for case in loops)
    # A run that stops, one that is aborted, one that hits its limit, one that rejects: all drawn.
    results = [case.expect["result"] if case.expect is not None else None for case in loops]
    reasons = {str(result["reason"]) if isinstance(result, dict) else "rejected" for result in results}
    assert {"stop", "length", "error", "aborted", "maxSteps", "rejected"} <= reasons, reasons


def test_every_cited_clause_is_a_spec_clause_of_the_cases_chapter(agent_cases: list[Case]) -> None:
    spec = load_clauses()
    for case in agent_cases:
        assert set(case.clauses) <= set(spec), case.id
        family = "LOOP-" if case.chapter == "07" else "AGENT-STATE-"
        assert all(clause.startswith(family) for clause in case.clauses), (case.id, case.clauses)
    cited = {clause for case in agent_cases for clause in case.clauses}
    # Every clause of the reducer, and every loop clause but the default limit of 32 (LOOP-LIMIT-2).
    wanted = {f"AGENT-STATE-{n}" for n in range(1, 9)} | {clause for clause in spec if clause.startswith("LOOP-")} - {"LOOP-LIMIT-2"}
    assert wanted <= cited, sorted(wanted - cited)


@pytest.mark.parametrize(("name", "clause", "lab"), [(name, clause, lab) for name, _, clause, lab in VARIANTS])
def test_a_one_bug_variant_fails_only_private_cases_of_its_clause_in_its_lab(
    name: str, clause: str, lab: str, failures: dict[str, list[Case]]
) -> None:
    # As the public cases do, each lab's private cases leave the other labs' clauses alone (the
    # caller's context outside lab 7.1, several system messages outside 7.2, ...): a bug costs
    # its own lab's points.
    outside = [(case.id, case.lab, case.clauses) for case in failures[name] if clause not in case.clauses or case.lab != lab]
    assert outside == [], f"{name} fails private cases that do not cite {clause} in lab {lab}"


def test_the_private_cases_of_their_lab_catch_most_one_bug_variants(failures: dict[str, list[Case]]) -> None:
    # A lookup table fails every private case; a real bug should fail some too. Measured with
    # this seed's 72 cases (12 a lab): 33 of the 38 variants caught, 5 not (7 and 6 for two other
    # seeds). default-limit-33 is out of reach (no program runs 32 steps); the other four are
    # reducer bugs that need one of lab 9.1's thirteen kinds of program and a condition in it
    # (ignores-run-id, ignores-status: the ignored event of another run, or an idle state naming
    # the event's run; keeps-streaming-text: an assistant_message over a streamed text;
    # skipped-stays-pending: a skipped id that is pending). With the kinds drawn as they came
    # (no Drawable.facets) 10 or 11 were uncaught, before chapters 07 and 09 were drawn all 38.
    uncaught = [name for name, _, _, lab in VARIANTS if not any(case.lab == lab for case in failures[name])]
    assert len(uncaught) <= UNCAUGHT_AT_MOST, uncaught


UNCAUGHT_AT_MOST = 5
#: Per clause a later chapter supersedes, that chapter (``*superseded at chapter 09*``).
SUPERSEDED = {clause: entry.superseded_at for clause, entry in load_clauses().items() if entry.superseded_at is not None}


#: JavaScript course projects (tests/support/js/variants, chapters 07 and 09) and the lab of their one bug (None: correct).
JS_PROJECTS = {
    "chapter-09": None,
    "shares-caller-transcript": "7.1",
    "results-in-completion-order": "7.4",
    "loses-siblings": "7.4",
    "max-steps-off-by-one": "7.5",
    "reducer-ignores-run-id": "9.1",
    "reducer-keeps-pending-id": "9.1",
}


@needs_node
@pytest.mark.parametrize(("project", "lab"), JS_PROJECTS.items())
def test_through_the_course_adapter_a_js_project_fails_only_its_own_labs_drawn_cases(
    project: str, lab: str | None, agent_dir: Path, tmp_path: Path
) -> None:
    # The expectations are the Python reference's; a correct JavaScript project (the Node.js
    # adapter's own scripted model, tools and gates) must agree with every one of them, and a
    # one-bug project fail no other lab's (how many of its own lab's it fails is measured above,
    # on the Python variants; 180 cases drawn from another seed caught each of these).
    ensure_generated()
    report = tmp_path / "report.json"
    result = cli(
        "run", "--impl", f"pi-course:{JS / 'variants' / project}", "--fixtures", str(agent_dir), "--report-json", str(report), timeout=600
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    outcomes = json.loads(report.read_text(encoding="utf-8"))["cases"]
    ran = [case for case in outcomes if case["status"] != "skipped" or case["lab"] != "9.1"]  # chapter 07 projects have no agent.js
    chapter = detect_chapter(JS / "variants" / project).chapter
    # As grading does (chapter_scope.py): a chapter 09 loop rightly catches the model throw a LOOP-TURN-2 case expects to reject.
    ran = [case for case in ran if not any((at := SUPERSEDED.get(clause)) is not None and at <= chapter for clause in case["clauses"])]
    failing = {case["lab"] for case in ran if case["status"] != "passed"}
    assert failing <= ({lab} if lab is not None else set()), [
        (case["id"], case["message"][:200]) for case in ran if case["status"] != "passed"
    ]
