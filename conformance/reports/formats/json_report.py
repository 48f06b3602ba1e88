"""The JSON report: everything the grader knows, for tools (dashboards, regrade scripts).

``causes`` lists the charged failures one entry per cause, worded as the terminal's lines
(:mod:`conformance.reports.formats.causes`): its labs, count, case ids, clause and ``line``.

A profile other than the course's is named (``profile``), and its groups are listed under
their own name: ``areas`` with an ``area`` each for ``pi-ai-1``, where the course has ``labs``
and ``lab``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.common.student_text import scrub
from conformance.feedback.case_feedback import case_feedback, inherited_line
from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase
from conformance.judging.bearing import fitting_hint
from conformance.model.clauses import Clause
from conformance.reports.formats import causes
from conformance.reports.formats.common import profile_of

FORMAT_VERSION = 1
_DIGITS = 4


def document(result: SubmissionResult, clauses: Mapping[str, Clause]) -> JsonObject:
    """The report as a JSON object."""
    label = result.rubric.group_label
    profile = profile_of(result)
    cases: list[JsonValue] = [_case(graded, clauses, label) for graded in result.score.cases]
    return {
        "format": "pi-conformance-grade",
        "version": FORMAT_VERSION,
        "submission": result.name,
        **({"profile": profile} if profile else {}),
        "impl": result.impl,
        "implementation": result.implementation,
        "status": result.status,
        "detail": result.detail,
        "rubric": {
            "name": result.rubric.name,
            "source": result.rubric.source,
            "scoring_mode": result.rubric.scoring_mode,
            **({"cause_cap": result.rubric.cause_cap} if result.rubric.scoring_mode == "capped" else {}),
        },
        "points": round(result.score.points, _DIGITS),
        "max_points": round(result.score.max_points, _DIGITS),
        "passed": result.score.passed,
        "total": result.score.total,
        "duration_s": round(result.duration_s, 3),
        "build_report": result.build_report,
        "notes": list(result.notes),
        "sandbox": result.isolation,
        "limits": result.limits,
        "chapter": result.chapter,
        f"{label}s": [
            {label: lab.lab, "points": round(lab.points, _DIGITS), "max_points": round(lab.max_points, _DIGITS), **lab.counts}
            for lab in result.score.labs
        ],
        "causes": _causes(result, clauses),
        "cases": cases,
    }


def _case(graded: GradedCase, clauses: Mapping[str, Clause], label: str) -> JsonValue:
    """One case's entry: status, points, divergence, hint and feedback."""
    outcome = graded.outcome
    divergence: JsonValue = outcome.divergence.to_json() if outcome.divergence is not None else None
    return {
        "id": graded.case.id,
        label: graded.case.lab,
        "status": outcome.status,
        # A visible case's points as students see them; what held-out cases confirm is in its lab's points.
        "points": round(graded.visible_points, _DIGITS),
        "max_points": round(graded.max_points, _DIGITS),
        "weight": graded.weight,
        "held_out": graded.held_out,
        "fixture": graded.case.location,
        "clauses": list(graded.case.clauses),
        "message": outcome.message,
        "divergence": divergence,
        "step_index": outcome.step_index,
        "hint": None if graded.passed else fitting_hint(graded.case, outcome),
        "inherited": _inherited(graded, clauses, label),
        "feedback": case_feedback(graded, clauses),
        "duration_s": round(outcome.duration_s, 6),
    }


def _causes(result: SubmissionResult, clauses: Mapping[str, Clause]) -> JsonValue:
    """One entry per cause of the charged failures, with the line the terminal and Markdown reports print."""
    label = result.rubric.group_label
    return [
        {
            f"{label}s": list(line.labs),
            "count": line.count,
            "cause": line.text,
            "clause": line.clause,
            "cases": list(line.case_ids),
            "held_out": [case_id for case_id in line.case_ids if case_id in line.held_out],
            "line": line.render(label),
        }
        for line in causes.cause_lines(result, clauses)
    ]


def _inherited(graded: GradedCase, clauses: Mapping[str, Clause], label: str = "lab") -> JsonValue:
    """Which earlier lab's (or area's) bug explains the case's failure (None when it does not)."""
    inherited = graded.inherited
    if inherited is None:
        return None
    return {
        label: inherited.lab,
        "symptoms": list(inherited.symptoms),
        "evidence": inherited.evidence.id,
        "explanation": inherited_line(graded, clauses),
    }


def render(result: SubmissionResult, clauses: Mapping[str, Clause]) -> str:
    """The report as JSON text."""
    # scrub: a folder name Python read with surrogate escapes must not make the report unwritable.
    return scrub(json.dumps(document(result, clauses), ensure_ascii=False, indent=2)) + "\n"
