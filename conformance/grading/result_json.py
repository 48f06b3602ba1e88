"""A :class:`SubmissionResult` as JSON, so a grading worker process can hand it to the batch.

Only what cannot be recomputed travels: the submission's own fields and each case's
:class:`Outcome`. The parent, which holds the same :class:`GradingContext`, rebuilds the
score with :func:`score`, so the points are computed by the process that never ran student
code, and the file a worker writes cannot claim points its outcomes do not earn.

Each outcome is written and read by :meth:`Outcome.to_json` and :meth:`Outcome.from_json`.
Keep this in step with :class:`SubmissionResult`: a new field there needs a line here, or it
is lost on the way from the worker to the gradebook.
"""

from __future__ import annotations

from typing import Any, get_args

from conformance.adapters.kinds import parse_impl
from conformance.grading.chapter_scope import scope_of, scoped
from conformance.grading.grader import GradingContext, SubmissionResult
from conformance.grading.scoring import score
from conformance.grading.status import SubmissionStatus
from conformance.judging.outcome import Outcome, OutcomeFormatError

FORMAT = 1


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
        "notes": list(result.notes),
        "chapter": result.chapter,
        "outcomes": [graded.outcome.to_json() for graded in result.score.cases],
        # Lab isolation, as the worker's adapter had it: the parent scores the same way.
        "isolated": {lab: sorted(labs) for lab, labs in result.score.isolated.items()},
    }


def result_from_json(data: object, context: GradingContext) -> SubmissionResult:
    """Rebuild a result from :func:`result_to_json`'s output; :class:`ResultFormatError` if it does not fit."""
    try:
        _require(isinstance(data, dict) and data.get("format") == FORMAT, "not a result of this format")
        assert isinstance(data, dict)
        # The chapter is read again here, from the submission's files: the worker's file does not choose the labs scored.
        context, chapter = scoped(context, scope_of(parse_impl(str(data["impl"]))))  # ImplSpecError is a ValueError
        status = data["status"]
        _require(status in get_args(SubmissionStatus), f"unknown status {status!r}")
        outcomes = [Outcome.from_json(item) for item in data["outcomes"]]
        by_id = {outcome.case_id: outcome for outcome in outcomes}
        # Every case of the context exactly once, scored in the context's order.
        whole = len(by_id) == len(outcomes) == len(context.cases) and all(case.id in by_id for case in context.cases)
        _require(whole, "its cases are not this run's cases")
        ordered = [by_id[case.id] for case in context.cases]
        isolated = data.get("isolated") or {}
        _require(isinstance(isolated, dict) and all(isinstance(labs, list) for labs in isolated.values()), "isolated is not a table")
        apart = {str(lab): frozenset(map(str, labs)) for lab, labs in isolated.items()}
        graded = score(context.rubric, zip(context.cases, ordered, strict=True), apart)
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
            notes=tuple(str(note) for note in data.get("notes", [])),
            chapter=chapter,
        )
    except ResultFormatError:
        raise
    except OutcomeFormatError as error:
        raise ResultFormatError(f"not a grading result of this run: {error}") from error
    except (KeyError, TypeError, ValueError) as error:
        raise ResultFormatError(f"not a grading result of this run ({type(error).__name__}: {error})") from error


def _require(condition: bool, problem: str) -> None:
    # Not assert: the check must survive python -O.
    if not condition:
        raise ResultFormatError(f"not a grading result of this run: {problem}")
