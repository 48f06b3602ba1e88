"""The clause a failure is quoted and grouped under is the case's own: the earliest it cites that bears on the divergence.

Issue 38: a case citing SM-PLAY-3 first was quoted under another of its clauses, whose text
happened to name more of the diverging words. The author's order says what the case checks.
"""

from __future__ import annotations

import dataclasses

from conformance.feedback.failure_report import failure_report
from conformance.judging.bearing import clause_hits, divergence_words, rank_clauses
from conformance.judging.failure_groups import group_failures
from conformance.judging.outcome import Divergence, Outcome
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses

CASE_ID = "sm-text-three-blocks-partials-not-shared"
# The second event's partial already holds all three blocks: one partial shared by every event.
OBSERVATION = {
    "steps": [
        {"threw": None},
        {"finished": True, "events": [{"type": "start"}, {"type": "text_delta"}, {"type": "text_delta"}, {"type": "text_delta"}]},
    ]
}
SHARED_PARTIAL = Outcome(
    CASE_ID,
    "failed",
    "steps[1].events[1].partial.content: expected 1 item, got 3",
    0.1,
    Divergence("steps[1].events[1].partial.content", '[{"type": "text", "text": "一"}]', "[…3 items…]", kind="value"),
    step_index=1,
    observation=OBSERVATION,  # type: ignore[arg-type]
)


def _case(*clauses: str) -> Case:
    case = next(case for case in load_suite(None, load_clauses()).cases if case.id == CASE_ID)
    return dataclasses.replace(case, clauses=clauses)


def _quoted(case: Case) -> list[str]:
    report = failure_report(case, SHARED_PARTIAL, load_clauses(), clause_limit=None)
    return [line.split(":")[1].strip() for line in report.splitlines() if line.startswith("  clause:")]


def test_a_case_citing_sm_play_3_first_is_quoted_and_grouped_under_it() -> None:
    clauses = load_clauses()
    words = divergence_words(_case("SM-PLAY-3"), SHARED_PARTIAL)
    # The trap: SM-TEXT-1 names more of the diverging words (partial, content and text_delta), and used to win.
    assert clause_hits(clauses["SM-TEXT-1"], words) > clause_hits(clauses["SM-PLAY-3"], words) > 0
    case = _case("SM-PLAY-3", "SM-PLAY-1", "SM-TEXT-1")
    assert rank_clauses(case, SHARED_PARTIAL, clauses)[0] == "SM-PLAY-3"
    assert _quoted(case)[0] == "SM-PLAY-3"
    [group] = group_failures([(case, SHARED_PARTIAL)], clauses)
    assert group.clause == "SM-PLAY-3"


def test_the_authors_order_decides_both_ways() -> None:
    case = _case("SM-PLAY-1", "SM-PLAY-3", "SM-TEXT-1")
    assert _quoted(case)[0] == "SM-PLAY-1"
    assert group_failures([(case, SHARED_PARTIAL)], load_clauses())[0].clause == "SM-PLAY-1"


def test_a_first_clause_that_names_nothing_that_diverged_gives_way() -> None:
    # SM-CURSOR-1 (which turn a call plays) says nothing of partials or events: the next clause that does is quoted.
    clauses = load_clauses()
    assert clause_hits(clauses["SM-CURSOR-1"], divergence_words(_case("SM-CURSOR-1"), SHARED_PARTIAL)) == 0
    case = _case("SM-CURSOR-1", "SM-PLAY-3", "SM-TEXT-1")
    assert _quoted(case)[0] == "SM-PLAY-3"
    assert group_failures([(case, SHARED_PARTIAL)], clauses)[0].clause == "SM-PLAY-3"
