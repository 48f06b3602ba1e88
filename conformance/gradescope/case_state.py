"""What one graded case is, in one word every report can show: the Gradescope test vocabulary.

Gradescope's per-test ``status`` knows only ``passed`` and ``failed`` (its colour), so the five
states a case can be in are said in words: a test of any state but ``passed`` and ``failed`` is
named ``STATE: CASE_ID``, every test's output begins with its state, and its tags hold it.

- ``passed``: the case passed.
- ``excused``: it failed, but an earlier lab's bug explains it (:mod:`conformance.grading.attribution`):
  charged once, there; the output says which lab and what the case is worth here.
- ``not run``: it never ran (the submission's time budget ran out, grading was interrupted): why.
- ``skipped``: the implementation does not claim its feature, or does not implement its operation.
- ``failed``: it failed or errored on its own (a wrong value, a throw, a timeout): fix it here.
"""

from __future__ import annotations

from typing import Final, Literal

from conformance.grading.scoring import GradedCase
from conformance.model.features import is_not_claimed
from conformance.reports.formats.common import points
from conformance.running.engine import NOT_RUN

CaseState = Literal["passed", "excused", "not run", "skipped", "failed"]
#: Every state, in the order a report lists them.
CASE_STATES: Final[tuple[CaseState, ...]] = ("passed", "excused", "not run", "skipped", "failed")


def state_of(graded: GradedCase) -> CaseState:
    """The one state of a graded case (see the module docstring)."""
    outcome = graded.outcome
    if outcome.status in ("passed", "skipped"):
        return outcome.status
    if outcome.message.startswith(NOT_RUN):
        return "not run"
    return "excused" if graded.inherited is not None else "failed"


def name_of(graded: GradedCase) -> str:
    """The case id, prefixed with its state unless that is ``passed`` or ``failed`` (which the status already says)."""
    state = state_of(graded)
    return graded.case.id if state in ("passed", "failed") else f"{state}: {graded.case.id}"


def status_of(graded: GradedCase) -> Literal["passed", "failed"]:
    """Gradescope's colour: ``passed`` for a passed case and an excused one that costs nothing, else ``failed``."""
    state = state_of(graded)
    whole = state == "excused" and points(graded.visible_points) == points(graded.max_points)
    return "passed" if state == "passed" or whole else "failed"


def headline(graded: GradedCase, group_label: str = "lab") -> str:
    """The first line of the test's output: its state and, but for ``passed``, why (and what an excused case is worth)."""
    state, outcome = state_of(graded), graded.outcome
    worth = f"{points(graded.visible_points)} of {points(graded.max_points)} points"
    if state == "passed":
        return "passed"
    if state == "excused" and graded.inherited is not None:
        which = "an earlier" if graded.inherited.earlier else "a later"  # later: a site's home inside a chapter
        return f"excused: {which} {group_label}'s bug ({group_label} {graded.inherited.lab}) explains this failure; it earns {worth} here"
    if state == "not run":
        return f"not run: {outcome.message.removeprefix(NOT_RUN).strip()} (it earns {worth})"
    if state == "skipped":
        kind = "not claimed" if is_not_claimed(outcome.message) else "not implemented"
        why = outcome.message.strip().removeprefix(f"{kind}: ")  # said once: "skipped (not implemented): X has no Y"
        return f"skipped ({kind}): {why} (it earns {worth})"
    how = "" if outcome.status == "failed" else f" ({outcome.status})"
    return f"failed{how}: it earns {worth}; what went wrong follows"


def output_of(graded: GradedCase, feedback: str, group_label: str = "lab") -> str:
    """The test's output: :func:`headline`, then the case's feedback (less its first line when the headline says it already)."""
    if state_of(graded) in ("skipped", "not run"):
        feedback = "\n".join(feedback.splitlines()[1:])
    return "\n".join(part for part in (headline(graded, group_label), feedback) if part)
