"""Gradescope's autograder ``results.json``.

Fields as Gradescope documents them (gradescope-autograders.readthedocs.io, "Autograder
Specifications"): a top-level ``score``, ``execution_time``, ``output`` and ``tests``; each
test has ``name`` (the case id, prefixed with its state when that is neither passed nor
failed), ``score``, ``max_score``, ``status`` (``passed`` or ``failed``, all Gradescope
accepts: see :mod:`conformance.gradescope.case_state` for the five states a case can be
in and how each is said), ``output`` (the state's line, then the feedback), ``tags`` (the
lab, the state, the clauses) and ``visibility`` (the rubric's
``held_out_visibility``, ``after_published`` by default, for the cases it holds out, else
``visible``). The total available points are in ``extra_data.max_score``: Gradescope takes
an assignment's maximum from its own settings.

The top-level ``output`` starts with "start here": the full feedback of one case per lab,
one per cause, hinted first (:mod:`conformance.feedback.featured`); the tests come in the
same order, then the other failing cases, then the passed ones.

Held out means held out: the top-level ``output`` every student sees counts only visible
cases, shows no points (lab points would reveal how the held-out cases did) and names no
held-out case; the submission's status detail is left to ``extra_data``, which students
do not see.

A profile other than the course's is named (``extra_data.profile``, the summary's first
line) and its groups are areas: tags ``area messages``, ``extra_data.areas``.

A submission none of whose cases ran (the build failed, nothing was submitted, the
implementation could not start: :data:`NOT_STARTED`) is one test that says why, first and
marked "start here" (the build's log in it), then one "not run" test per lab: a size that
does not grow with the cases, and no case feedback that only repeats the one cause.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.common.student_text import for_terminal, scrub
from conformance.feedback.case_feedback import case_feedback
from conformance.feedback.featured import featured_by_lab
from conformance.gradescope import case_state
from conformance.grading.grader import SubmissionResult
from conformance.grading.scoring import GradedCase
from conformance.grading.status import NOT_STARTED
from conformance.model.clauses import Clause
from conformance.reports.formats import terminal
from conformance.reports.formats.common import profile_of

_DIGITS = 4


def results(result: SubmissionResult, clauses: Mapping[str, Clause]) -> JsonObject:
    """The ``results.json`` document as a JSON object."""
    if result.status in NOT_STARTED:
        return _not_started(result, clauses)
    label = result.rubric.group_label
    tests: list[JsonValue] = []
    featured = start_here(result)
    first = {graded.case.id: index for index, graded in enumerate(featured)}
    # Featured (hinted first) cases lead, then the other failures, then what passed: the
    # first test a student opens is the one to start with.
    ordered = sorted(result.score.cases, key=lambda graded: (first.get(graded.case.id, len(first)), graded.passed))
    for graded in ordered:
        feedback = case_feedback(graded, clauses)
        tests.append(
            {
                "name": case_state.name_of(graded),
                "score": round(graded.visible_points, _DIGITS),
                "max_score": round(graded.max_points, _DIGITS),
                "status": case_state.status_of(graded),
                "output": case_state.output_of(graded, feedback, label),
                "tags": [f"{label} {graded.case.lab}", case_state.state_of(graded), *graded.case.clauses],
                "visibility": result.rubric.held_out_visibility if graded.held_out else "visible",
            }
        )
    tests += confirmation_tests(result)
    labs: list[JsonValue] = [
        {
            label: lab.lab,
            "score": round(lab.points, _DIGITS),
            "max_score": round(lab.max_points, _DIGITS),
            "passed": lab.passed,
            "total": lab.total,
        }
        for lab in result.score.labs
    ]
    summary = student_summary(result) if result.rubric.held_out else terminal.render(result, clauses, details_per_lab=0, list_cases=False)
    if featured:
        summary = start_here_text(featured, clauses, label) + "\n" + summary
    if result.notes and result.rubric.held_out:  # the terminal summary already has them
        summary += "".join(f"\nnote: {for_terminal(note)}" for note in result.notes)
    return _document(result, summary, labs, tests)


def _document(result: SubmissionResult, output: str, labs: list[JsonValue], tests: list[JsonValue]) -> JsonObject:
    profile = profile_of(result)
    return {
        "score": round(result.score.points, _DIGITS),
        "execution_time": round(result.duration_s, 3),
        "output": output,
        "output_format": "text",
        "extra_data": {
            "max_score": round(result.score.max_points, _DIGITS),
            **({"profile": profile} if profile else {}),
            "status": result.status,
            "detail": result.detail,
            "sandbox": result.isolation,
            "limits": result.limits,
            **({"chapter": result.chapter} if result.chapter else {}),
            f"{result.rubric.group_label}s": labs,
        },
        "tests": tests,
    }


_WHY = {
    "build-failed": "the build failed",
    "not-a-project": "there is no project to grade",
    "invalid": "the implementation could not start",
}


def _failed_test(name: str, max_points: float, output: str, tag: str) -> JsonObject:
    return {
        "name": name,
        "score": 0,
        "max_score": round(max_points, _DIGITS),
        "status": "failed",
        "output": output,
        "tags": [tag],
        "visibility": "visible",
    }


def _not_started(result: SubmissionResult, clauses: Mapping[str, Clause]) -> JsonObject:
    """One test with the reason (and the build's log), then one "not run" test per lab: nothing ran."""
    del clauses  # no case ran: there is no case feedback to give
    label = result.rubric.group_label
    why = _WHY.get(result.status, result.status)
    reason = f"{why}: {result.detail}" if result.detail else why
    log = f"\n\n{result.build_report}" if result.build_report else ""
    first = f"start here: {reason}\nNo case ran: fix this, then submit again.{log}"
    tests: list[JsonValue] = [_failed_test(f"start here: {why}", result.score.max_points, for_terminal(first), "start here")]
    labs: list[JsonValue] = []
    for lab in result.score.labs:
        not_run = f"not run: {why} (see the first test)"
        tests.append(_failed_test(f"{label} {lab.lab}: not run", lab.max_points, not_run, f"{label} {lab.lab}"))
        labs.append({label: lab.lab, "score": 0, "max_score": round(lab.max_points, _DIGITS), "passed": 0, "total": lab.total})
    output = f"start here: {reason}\nNo case ran: the first test says why{' and holds the build log' if log else ''}.\n"
    return _document(result, for_terminal(output), labs, tests)


def confirmation_tests(result: SubmissionResult) -> list[JsonValue]:
    """Per lab, one held-out test saying what its held-out cases did not confirm of its public cases' points.

    Public tests show their unconfirmed points, so they say nothing about held-out cases; this
    test, shown with the held-out ones, says what the confirmation took from the score.
    """
    label = result.rubric.group_label
    tests: list[JsonValue] = []
    for lab in result.score.labs:
        public = [graded for graded in result.score.cases if graded.case.lab == lab.lab and graded.unconfirmed_points is not None]
        lost = sum(graded.visible_points - graded.points for graded in public)
        if not public:
            continue
        # Scored 0 of 0 (a test's score stays within 0..max_score): the cost is in the text and in
        # the submission's score, which is the confirmed total.
        tests.append(
            {
                "name": f"{label} {lab.lab}: public cases confirmed by held-out cases",
                "score": 0,
                "max_score": 0,
                "status": "passed" if lost <= 0 else "failed",
                "output": "A public case earns its points as far as the held-out cases of its clauses earn theirs"
                f" (rubric public_cases: confirmed); here that costs {lost:.2f} points, already taken from the score.",
                "tags": [f"{label} {lab.lab}"],
                "visibility": result.rubric.held_out_visibility,
            }
        )
    return tests


def start_here(result: SubmissionResult) -> list[GradedCase]:
    """The cases to read first: one per cause, hinted first, one per lab (:func:`featured_by_lab`); never a held-out case."""
    return [graded for cases in featured_by_lab(result, 1).values() for graded in cases if not graded.held_out]


def start_here_text(featured: list[GradedCase], clauses: Mapping[str, Clause], label: str) -> str:
    """``start here`` and the full feedback of each featured case, for the top of the output."""
    parts = [f"start here: {len(featured)} case{'s' if len(featured) != 1 else ''} to read first (one per {label}, each a different cause)"]
    for graded in featured:
        parts += ["", f"── {label} {graded.case.lab}: {graded.case.id}", case_feedback(graded, clauses)]
    # Messages quote the submission: no escape sequence of theirs reaches the page.
    return for_terminal("\n".join(parts) + "\n")


def student_summary(result: SubmissionResult) -> str:
    """Per lab (area), how many *visible* cases passed: nothing a student could learn held-out results from."""
    label, profile = result.rubric.group_label, profile_of(result)
    name_width = max([5, *(len(lab.lab) + 2 for lab in result.score.labs)])
    lines = [
        f"pi-conformance: {result.name}" + (f" (profile {profile})" if profile else ""),
        "  visible cases (held-out cases are graded too; they are shown when grades are published)",
        *([f"  graded at {result.chapter}"] if result.chapter else []),
    ]
    for lab in result.score.labs:
        visible = [graded for graded in result.score.cases if graded.case.lab == lab.lab and not graded.held_out]
        passed = sum(graded.passed for graded in visible)
        lines.append(f"  {label} {lab.lab:<{name_width}}{passed:>4}/{len(visible):<4} passed")
    return "\n".join(lines) + "\n"


def render(result: SubmissionResult, clauses: Mapping[str, Clause]) -> str:
    """``results.json`` as text."""
    return scrub(json.dumps(results(result, clauses), ensure_ascii=False, indent=2)) + "\n"
