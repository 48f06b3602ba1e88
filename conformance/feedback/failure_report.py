"""The full feedback for one failed case, as every channel prints it: outcome, reading, case, step, clauses, trace, hint."""

from __future__ import annotations

import re
from collections.abc import Mapping

from conformance.common.jsontypes import JsonValue
from conformance.feedback.readings import symptom_reading
from conformance.judging.bearing import EVENTS_PATH, event_types, fitting_hint, is_silent_stream, rank_clauses
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.model.clauses import Clause

_CLAUSE_TEXT_LIMIT = 200


_QUOTED_CLAUSES = 2


def describe_step(step: Mapping[str, JsonValue]) -> str:
    """A one-line summary of a scenario step, such as ``consume call=first``."""
    parts = [str(step.get("action"))]
    parts += [f"{key}={step[key]}" for key in ("call", "signal") if key in step]
    return " ".join(parts)


def trace_table(expected: list[str], actual: list[str], marked: int | None) -> list[str]:
    """Expected and actual event types side by side, one event per row, ``>`` on the first differing row."""
    width = max([len("expected"), *(len(name) for name in expected)])
    rows = [f"      {'#':>2}  {'expected':<{width}}  actual"]
    for index in range(max(len(expected), len(actual))):
        left = expected[index] if index < len(expected) else "-"
        right = actual[index] if index < len(actual) else "-"
        marker = ">" if index == marked else " "
        rows.append(f"    {marker} {index:>2}  {left:<{width}}  {right}")
    return rows


def first_difference(expected: list[str], actual: list[str]) -> int | None:
    """The first row where two event-type lists differ (an extra or missing event included)."""
    for index in range(max(len(expected), len(actual))):
        if index >= len(expected) or index >= len(actual) or expected[index] != actual[index]:
            return index
    return None


def failure_report(
    case: Case, outcome: Outcome, clauses: Mapping[str, Clause], clause_limit: int | None = _CLAUSE_TEXT_LIMIT, course_hints: bool = True
) -> str:
    """The full feedback for a failed or errored case.

    A symptom with a known reading (:func:`conformance.feedback.readings.symptom_reading`, such as
    a value that belongs to another turn of the script) says it under the first line.

    ``clause_limit`` cuts each clause's text (the pytest output stays short); ``None``
    quotes it whole, as grading reports do. Without ``course_hints`` (a port, not a course
    project), the hint keeps only what is not about the course's TypeScript code
    (:func:`porter_hint`).
    """
    lines = [outcome.message]
    reading = symptom_reading(case, outcome)
    if reading:
        # What the value says about the bug, next to the value itself.
        lines.append(f"  reading: {reading}")
    group = "lab" if case.profile == "course" else "area"  # another profile groups its cases by area
    lines.append(f"  case:    {case.id} ({group} {case.lab}): {case.description}")
    lines.append(f"  fixture: {case.location}")
    if outcome.step_index is not None:
        step = case.steps[outcome.step_index]
        step_line = case.step_lines[outcome.step_index] if outcome.step_index < len(case.step_lines) else case.line
        lines.append(f"  step:    steps[{outcome.step_index}] {describe_step(step)} ({case.file}:{step_line})")
    ranked = rank_clauses(case, outcome, clauses)
    for clause_id in ranked[:_QUOTED_CLAUSES]:
        clause = clauses.get(clause_id)
        text = clause.text if clause else "(unknown clause)"
        if clause_limit is not None and len(text) > clause_limit:
            text = text[: clause_limit - 1] + "…"
        lines.append(f"  clause:  {clause_id}: {text}")
    if ranked[_QUOTED_CLAUSES:]:
        lines.append(f"  also:    {', '.join(ranked[_QUOTED_CLAUSES:])}")
    if case.features:
        # Behaviours beyond the chapter text (spec/features.yaml): a porter sees why the case may fail.
        lines.append(f"  feature: {', '.join(case.features)} (beyond the chapter text; see spec/features.yaml)")
    lines.extend(_trace_lines(case, outcome))
    silence = silent_stream_line(case, outcome)
    if silence:
        lines.append(f"  note:    {silence}")
    hint = fitting_hint(case, outcome)
    hint = (hint and hint.removeprefix(COURSE_HINT_MARKER)) if course_hints else porter_hint(hint)
    if hint:
        lines.append(f"  hint:    {hint}")
    return "\n".join(lines)


#: A hint rung that starts with this marker is about the course's code only: porters never see it.
COURSE_HINT_MARKER = "[course] "


#: A sentence naming a course source file (``scripted-model.ts``) is for students of the course.
_COURSE_SENTENCE = re.compile(r"\b[\w-]+\.ts\b")


_SENTENCE_END = re.compile(r"(?<=[.;:])\s+(?=[A-Z])")


def porter_hint(hint: str | None) -> str | None:
    """A hint as a porter sees it: none for a ``[course]`` rung, else without the sentences naming course files."""
    if not hint or hint.startswith(COURSE_HINT_MARKER):
        return None
    kept = [sentence for sentence in _SENTENCE_END.split(hint) if not _COURSE_SENTENCE.search(sentence)]
    return " ".join(kept) or None


def silent_stream_line(case: Case, outcome: Outcome) -> str | None:
    """A plain sentence when a consume step saw no event at all where events were expected."""
    if not is_silent_stream(case, outcome):
        return None
    return (
        "0 events: no event arrived within the settle deadline and the stream did not end; "
        "stream() never pushed anything (is the producer ever started?)"
    )


def _trace_lines(case: Case, outcome: Outcome) -> list[str]:
    divergence = outcome.divergence
    match = EVENTS_PATH.match(divergence.path) if divergence else None
    if match is None or outcome.observation is None:
        return []
    step_index = int(match["step"])
    expected_step = case.steps[step_index].get("expect")
    expected = event_types(expected_step.get("events") if isinstance(expected_step, dict) else None)
    observed_steps = outcome.observation.get("steps")
    observed = observed_steps[step_index] if isinstance(observed_steps, list) else None
    actual = event_types(observed.get("events") if isinstance(observed, dict) else None)
    marked = int(match["index"]) if match["index"] is not None else first_difference(expected, actual)
    return ["  events (expected | actual):", *trace_table(expected, actual, marked)]
