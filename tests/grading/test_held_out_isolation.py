"""Held-out cases run last, in an adapter process of their own (issue 24, held-out exfiltration).

A submission sees every request it answers; if held-out inputs reached it while visible cases
were still to run, it could put them into a visible case's thrown message, and a resubmission
could answer them from a table. Held-out cases therefore run after every visible result is
fixed, in a fresh process: nothing that saw a held-out input can reach visible output.
"""

from __future__ import annotations

import json
import sys

from conformance.adapters.settings import ImplSettings
from conformance.grading.grader import GradeOptions, grade_submission, prepare
from conformance.grading.rubric import parse_rubric
from tests.support.paths import REPO

LEAKER = f"cmd:{sys.executable} {REPO / 'tests' / 'support' / 'fakes' / 'misbehaving.py'} leak-on:*"


def test_no_visible_feedback_holds_a_held_out_input() -> None:
    labs = {lab: {"weight": 25} for lab in ("3.1", "3.2", "4.1", "4.2")}
    everything = prepare(parse_rubric({"version": 1, "name": "all", "labs": labs}))
    text_of = [case for case in everything.cases if case.operation == "text_of"]
    held = text_of[: len(text_of) // 2]  # earlier in case order than most visible cases
    context = prepare(parse_rubric({"version": 1, "name": "held", "labs": labs, "held_out": [case.id for case in held]}))
    result = grade_submission(LEAKER, context, GradeOptions(settings=ImplSettings(sandbox="none"), build=False))
    secrets = [json.dumps(case.input, ensure_ascii=False) for case in held]
    visible = [graded for graded in result.score.cases if not graded.held_out]
    leaked_into = [graded.case.id for graded in visible for secret in secrets if secret in graded.outcome.message]
    assert leaked_into == []
    # The leak really happens within a phase: a held-out case's message shows earlier held-out inputs.
    last = next(graded for graded in result.score.cases if graded.case.id == held[-1].id)
    assert secrets[0] in last.outcome.message
    assert all(graded.outcome.status in ("failed", "errored") for graded in visible)
