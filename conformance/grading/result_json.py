"""A :class:`SubmissionResult` as JSON, so a grading worker process can hand it to the batch.

Only what cannot be recomputed travels: the submission's own fields and each case's
:class:`Outcome`. The parent, which holds the same :class:`GradingContext`, rebuilds the
score with :func:`score`, so the points are computed by the process that never ran student
code, and the file a worker writes cannot claim points its outcomes do not earn.

Keep this in step with :class:`SubmissionResult` and :class:`Outcome`: a new field there
needs a line here, or it is lost on the way from the worker to the gradebook.
"""

from __future__ import annotations

import dataclasses
from typing import Any, get_args

from conformance.grading.grader import GradingContext, SubmissionResult
from conformance.grading.scoring import score
from conformance.grading.status import SubmissionStatus
from conformance.judging.outcome import Divergence, Outcome

FORMAT = 1
_OUTCOME_STATUSES = ("passed", "failed", "errored", "skipped")


class ResultFormatError(ValueError):
    """A worker's result file that is not a result of this grading run."""


def result_to_json(result: SubmissionResult) -> dict[str, Any]:
    """The JSON form of ``result`` (the rubric and cases are left to the reader's context)."""
    return {
        "format": FORMAT,
        "name": result.name,
        "impl": result.impl,
        "implementation": result.implementation,
        "status": result.status,
        "detail": result.detail,
        "duration_s": result.duration_s,
        "build_report": result.build_report,
        "isolation": result.isolation,
        "limits": result.limits,
        "outcomes": [outcome_to_json(graded.outcome) for graded in result.score.cases],
    }


def result_from_json(data: object, context: GradingContext) -> SubmissionResult:
    """Rebuild a result from :func:`result_to_json`'s output; :class:`ResultFormatError` if it does not fit."""
    try:
        _require(isinstance(data, dict) and data.get("format") == FORMAT, "not a result of this format")
        assert isinstance(data, dict)
        status = data["status"]
        _require(status in get_args(SubmissionStatus), f"unknown status {status!r}")
        outcomes = [outcome_from_json(item) for item in data["outcomes"]]
        by_id = {outcome.case_id: outcome for outcome in outcomes}
        # Every case of the context exactly once, scored in the context's order.
        whole = len(by_id) == len(outcomes) == len(context.cases) and all(case.id in by_id for case in context.cases)
        _require(whole, "its cases are not this run's cases")
        ordered = [by_id[case.id] for case in context.cases]
        graded = score(context.rubric, zip(context.cases, ordered, strict=True))
        build_report = data.get("build_report")
        return SubmissionResult(
            name=str(data["name"]),
            impl=str(data["impl"]),
            implementation=str(data["implementation"]),
            status=status,
            detail=str(data["detail"]),
            score=graded,
            rubric=context.rubric,
            duration_s=float(data["duration_s"]),
            build_report=str(build_report) if build_report is not None else None,
            isolation=str(data.get("isolation", "none")),
            limits=str(data.get("limits", "")),
        )
    except ResultFormatError:
        raise
    except (KeyError, TypeError, ValueError) as error:
        raise ResultFormatError(f"not a grading result of this run ({type(error).__name__}: {error})") from error


def _require(condition: bool, problem: str) -> None:
    # Not assert: the check must survive python -O.
    if not condition:
        raise ResultFormatError(f"not a grading result of this run: {problem}")


_OUTCOME_FIELDS = tuple(field.name for field in dataclasses.fields(Outcome))


def outcome_to_json(outcome: Outcome) -> dict[str, Any]:
    """One case's outcome as JSON (what :func:`outcome_from_json` reads back).

    The observation is shared, not copied (``dataclasses.asdict`` deep-copies it): the
    result is for serialising, and copying every observation was most of its cost.
    """
    data = {name: getattr(outcome, name) for name in _OUTCOME_FIELDS}
    data["divergence"] = dataclasses.asdict(outcome.divergence) if outcome.divergence is not None else None
    return data


def outcome_from_json(data: object) -> Outcome:
    """An outcome read back from JSON a worker wrote; :class:`ResultFormatError` when malformed."""
    _require(isinstance(data, dict) and data.get("status") in _OUTCOME_STATUSES, "an outcome without a known status")
    assert isinstance(data, dict)  # for the type checker; _require checked it
    known = {item.name for item in dataclasses.fields(Outcome)}
    values = {key: value for key, value in data.items() if key in known}
    # The types the reports rely on: a malformed file costs its own row, never the batch.
    _require(isinstance(values.get("case_id"), str) and isinstance(values.get("message"), str), "an outcome without id or message")
    _require(isinstance(values.get("duration_s"), int | float), "an outcome without a duration")
    _require(values.get("observation") is None or isinstance(values["observation"], dict), "an observation that is not an object")
    _require(values.get("step_index") is None or type(values["step_index"]) is int, "a step index that is not a number")
    divergence = values.get("divergence")
    _require(
        divergence is None or (isinstance(divergence, dict) and all(isinstance(v, str) for v in divergence.values())), "a bad divergence"
    )
    values["divergence"] = Divergence(**divergence) if isinstance(divergence, dict) else None
    values["timed_out"] = bool(values.get("timed_out", False))
    values["given_up"] = bool(values.get("given_up", False))
    values["hung"] = bool(values.get("hung", False))
    return Outcome(**values)
