"""A downstream symptom of a used function's bug is that bug's cause; causes are ordered root first."""

from __future__ import annotations

from conformance.judging.failure_groups import group_failures
from conformance.judging.outcome import Divergence, Outcome
from conformance.judging.root_causes import depth, root_first
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses


def _failing(case_id: str, operation: str, clauses: list[str], path: str = "value") -> tuple[Case, Outcome]:
    case = Case(case_id, "f.yaml", 1, "03", "3.1", tuple(clauses), "", operation, {}, {})
    return case, Outcome(case_id, "failed", "", 0.0, divergence=Divergence(path, '"A"', '"B"'))


def test_a_user_function_citing_the_root_clause_joins_the_root_cause() -> None:
    groups = group_failures(
        [
            _failing("prompt-1", "current_system_prompt", ["SYS-PROMPT-1", "SYS-TEXT-1"], "value.x"),
            _failing("text-1", "system_message_text", ["SYS-TEXT-1"]),
            _failing("text-2", "system_message_text", ["SYS-TEXT-1"]),
        ],
        {},
    )
    (group,) = groups
    assert [case.id for case, _ in group.members][-1] == "prompt-1"
    assert group.example[0].id == "text-1"


def test_a_user_case_that_does_not_cite_the_root_clause_stays_apart_but_comes_after_it() -> None:
    groups = group_failures(
        [
            _failing("prompt-1", "current_system_prompt", ["SYS-PROMPT-1"], "value.x"),
            _failing("prompt-2", "current_system_prompt", ["SYS-PROMPT-1"], "value.x"),
            _failing("text-1", "system_message_text", ["SYS-TEXT-1"]),
        ],
        {},
    )
    assert [group.example[0].id for group in groups] == ["text-1", "prompt-1"]


def test_unrelated_causes_keep_their_order_and_roots_have_depth_zero() -> None:
    members = {"a": [_failing("m", "make_text", ["IR-CTOR-1"])], "b": [_failing("t", "text_of", ["IR-TEXT-1"])]}
    assert root_first(["b", "a"], members) == ["b", "a"]
    assert depth(members["a"][0][0]) == 0 and depth(members["b"][0][0]) == 1


def test_a_user_case_citing_the_clause_that_bears_most_on_the_root_divergence_joins_it() -> None:
    """A currentSystemMessage that keeps a re-added section in place breaks SYS-REPLAY-4, though its cases cite SYS-REPLAY-3 first."""
    order = ["SYS-REPLAY-3", "SYS-REPLAY-4", "SYS-REPLAY-7"]
    roots = [_failing(f"replay-{n}", "current_system_message", order, "section_order[0]") for n in range(2)]
    prompt = _failing("prompt-1", "current_system_prompt", ["SYS-PROMPT-1", "SYS-REPLAY-4", "SYS-TEXT-1"])
    (group,) = group_failures([*roots, prompt], load_clauses())
    assert group.pattern == "current_system_message section_order" and group.clause == "SYS-REPLAY-3"
    assert [case.id for case, _ in group.members] == ["replay-0", "replay-1", "prompt-1"]
    # Without the clauses' text nothing says which clause the order breaks: the prompt's cause stays its own.
    assert len(group_failures([*roots, prompt], {})) == 2
