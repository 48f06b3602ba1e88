"""Hypothesis strategies for chapter 09's ``run_agent`` (labs 9.2 to 9.5, spec/spec.md sections 11.2 to 11.6).

A program is one Agent driven through steps in spec/fixture-format.md's ``run_agent``
vocabulary: the model's turns (played at once, held by a gate, thrown, changed later), the
Agent's ``toolExecutor`` scripted per call id, scripted subscribers and the steps. Each lab
draws a few kinds of scenario, each a branch of its own (tag ``kind:NAME``; the lab's tag
``lab:N.N``), and each kind keeps to its own lab's controls, as the public cases do: only lab
9.3 has subscribers that throw, snapshot, record or mutate, only lab 9.4 aborts, only lab
9.5 steers or follows up. A bug then costs its own lab's points.

Every scenario ends without a stall in a correct Agent:

* a held turn or a gated tool is only ever waited on by a step that then completes or
  releases it (an abort answers a held turn that honours it);
* a tool batch of two calls gates both, and the steps release them one at a time, each
  call's ``tool_end`` awaited before the next gate opens (the order two unordered calls settle
  in is open, as in :mod:`.strategies_loop`);
* the model always has a turn for each request a correct Agent makes (spare turns are
  harmless), so the ``ScriptedModel``'s exhaustion message (it holds a clock) is never seen;
* a scripted subscriber is subscribed at most once (a second ``subscribe`` would deliver twice).

What each kind is about, hence the clauses a case cites, is in
:mod:`conformance.fuzz.expect_agent`. The scenarios themselves are in
:mod:`.strategies_agent_runs` (labs 9.2, 9.3) and :mod:`.strategies_agent_controls` (9.4,
9.5), built with :mod:`.strategies_agent_scene`; this module is their table.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from conformance.fuzz.strategies import Program
from conformance.fuzz.strategies_agent_controls import (
    abort_during_tool_program,
    abort_ignored_program,
    abort_in_run_start_program,
    abort_reaches_model_program,
    abort_while_idle_program,
    closed_program,
    discarded_program,
    follow_ups_program,
    steer_at_text_stop_program,
    steer_during_batch_program,
)
from conformance.fuzz.strategies_agent_runs import (
    busy_program,
    changed_later_program,
    copies_program,
    model_throws_program,
    queued_event_program,
    run_end_listener_program,
    sequential_program,
    subscribers_program,
    uncloneable_program,
)

AGENT_LABS = ("9.2", "9.3", "9.4", "9.5")
#: The kinds of scenario of each lab, in the order their branches are listed.
KINDS: dict[str, tuple[str, ...]] = {
    "9.2": ("sequential", "busy", "model-throws", "run-end-listener"),
    "9.3": ("subscribers", "copies", "uncloneable", "changed-later", "queued-event"),
    "9.4": ("abort-in-run-start", "abort-during-tool", "abort-ignored", "abort-reaches-model", "abort-while-idle"),
    "9.5": ("steer-during-batch", "steer-at-text-stop", "follow-ups", "closed", "discarded"),
}

_KIND_PROGRAMS: dict[str, Callable[[], st.SearchStrategy[Program]]] = {
    "sequential": sequential_program,
    "busy": busy_program,
    "model-throws": model_throws_program,
    "run-end-listener": run_end_listener_program,
    "subscribers": subscribers_program,
    "copies": copies_program,
    "uncloneable": uncloneable_program,
    "changed-later": changed_later_program,
    "queued-event": queued_event_program,
    "abort-in-run-start": abort_in_run_start_program,
    "abort-during-tool": abort_during_tool_program,
    "abort-ignored": abort_ignored_program,
    "abort-reaches-model": abort_reaches_model_program,
    "abort-while-idle": abort_while_idle_program,
    "steer-during-batch": steer_during_batch_program,
    "steer-at-text-stop": steer_at_text_stop_program,
    "follow-ups": follow_ups_program,
    "closed": closed_program,
    "discarded": discarded_program,
}


def _lab_strategy(lab: str) -> Callable[[], st.SearchStrategy[Program]]:
    return lambda: st.one_of(*[_KIND_PROGRAMS[kind]() for kind in KINDS[lab]])


#: Each lab's programs (a new strategy object each call), a branch per kind.
AGENT_LAB_STRATEGIES = {lab: _lab_strategy(lab) for lab in AGENT_LABS}
#: Per lab, the tags that tell its kinds apart (:attr:`conformance.fuzz.operations.Drawable.facets`).
AGENT_FACETS = {lab: tuple(f"kind:{kind}" for kind in kinds) for lab, kinds in KINDS.items()}


def run_agent_programs() -> st.SearchStrategy[Program]:
    """Each lab's programs as a branch of its own."""
    return st.one_of(*[AGENT_LAB_STRATEGIES[lab]() for lab in AGENT_LABS])
