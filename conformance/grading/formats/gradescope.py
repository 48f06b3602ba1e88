"""Gradescope's autograder ``results.json``.

Fields as Gradescope documents them (gradescope-autograders.readthedocs.io, "Autograder
Specifications"): a top-level ``score``, ``execution_time``, ``output`` and ``tests``; each
test has ``name`` (the case id), ``score``, ``max_score``, ``status`` (``passed`` or
``failed``: skipped and errored cases earn nothing, so they are ``failed`` with the reason
in ``output``), ``output`` (the feedback), ``tags`` and ``visibility`` (``hidden`` for the
cases the rubric holds out, else ``visible``). The total available points are in
``extra_data.max_score``: Gradescope takes an assignment's maximum from its own settings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from conformance.clauses import Clause
from conformance.grading.feedback import case_feedback
from conformance.grading.formats import terminal
from conformance.grading.grader import SubmissionResult
from conformance.jsontypes import JsonObject, JsonValue

_DIGITS = 4


def results(result: SubmissionResult, clauses: Mapping[str, Clause]) -> JsonObject:
    """The ``results.json`` document as a JSON object."""
    tests: list[JsonValue] = []
    for graded in result.score.cases:
        feedback = case_feedback(graded, clauses)
        tests.append(
            {
                "name": graded.case.id,
                "score": round(graded.points, _DIGITS),
                "max_score": round(graded.max_points, _DIGITS),
                "status": "passed" if graded.passed else "failed",
                "output": feedback or "passed",
                "tags": [f"lab {graded.case.lab}", *graded.case.clauses],
                "visibility": "hidden" if graded.held_out else "visible",
            }
        )
    labs: list[JsonValue] = [
        {
            "lab": lab.lab,
            "score": round(lab.points, _DIGITS),
            "max_score": round(lab.max_points, _DIGITS),
            "passed": lab.passed,
            "total": lab.total,
        }
        for lab in result.score.labs
    ]
    # Just the points table: the cases are in `tests`, and a held-out case must not be named
    # in a summary every student sees.
    summary = terminal.render(result, clauses, details_per_lab=0, list_cases=False)
    return {
        "score": round(result.score.points, _DIGITS),
        "execution_time": round(result.duration_s, 3),
        "output": summary,
        "output_format": "text",
        "extra_data": {
            "max_score": round(result.score.max_points, _DIGITS),
            "status": result.status,
            "detail": result.detail,
            "labs": labs,
        },
        "tests": tests,
    }


def render(result: SubmissionResult, clauses: Mapping[str, Clause]) -> str:
    """``results.json`` as text."""
    return json.dumps(results(result, clauses), ensure_ascii=False, indent=2) + "\n"
