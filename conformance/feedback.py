"""Turn an outcome into a message a student can act on without reading the suite's source."""

from __future__ import annotations

import re
from collections.abc import Mapping

from conformance.cases import Case
from conformance.clauses import Clause
from conformance.execution import Outcome
from conformance.jsontypes import JsonValue

_CLAUSE_TEXT_LIMIT = 200
_QUOTED_CLAUSES = 2
_EVENTS_PATH = re.compile(r"^steps\[(?P<step>\d+)\]\.events(?:\[(?P<index>\d+)\])?")
_PATH_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Observation keys whose clauses say it in other words.
_KEY_WORDS: Mapping[str, tuple[str, ...]] = {
    "input_unchanged": ("modify",),
    "turns_unchanged": ("modify",),
    "threw": ("throw", "throwing"),
    "finished": ("finishes", "ends", "end"),
    "same_object_as": ("same object", "identity"),
    "section_order": ("order", "position"),
    "state": ("resolves", "settles", "reject"),
}
# Path keys too common to tell clauses apart.
_PLAIN_KEYS = frozenset({"steps", "events", "value", "type"})


def describe_step(step: Mapping[str, JsonValue]) -> str:
    """A one-line summary of a scenario step, such as ``consume call=first``."""
    parts = [str(step.get("action"))]
    parts += [f"{key}={step[key]}" for key in ("call", "signal") if key in step]
    return " ".join(parts)


def event_types(events: JsonValue) -> list[str]:
    """The ``type`` of each event in a list (``?`` for anything that is not an event)."""
    if isinstance(events, dict) and "$oneOf" in events and isinstance(events["$oneOf"], list) and events["$oneOf"]:
        events = events["$oneOf"][0]
    if not isinstance(events, list):
        return []
    return [str(event.get("type", "?")) if isinstance(event, dict) else "?" for event in events]


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


def failure_report(case: Case, outcome: Outcome, clauses: Mapping[str, Clause], clause_limit: int | None = _CLAUSE_TEXT_LIMIT) -> str:
    """The full feedback for a failed or errored case.

    ``clause_limit`` cuts each clause's text (the pytest output stays short); ``None``
    quotes it whole, as grading reports do.
    """
    lines = [outcome.message]
    lines.append(f"  case:    {case.id} (lab {case.lab}): {case.description}")
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
    lines.extend(_trace_lines(case, outcome))
    if case.hint:
        lines.append(f"  hint:    {case.hint[0]}")
    return "\n".join(lines)


def divergence_words(case: Case, outcome: Outcome) -> set[str]:
    """Words that say what diverged: the path's keys and the event type at the diverged event."""
    divergence = outcome.divergence
    if divergence is None:
        return set()
    words: set[str] = set()
    for key in _PATH_KEY.findall(divergence.path):
        if key not in _PLAIN_KEYS:
            words.add(key.lower())
            words.update(_KEY_WORDS.get(key, ()))
    match = _EVENTS_PATH.match(divergence.path)
    if match and match["index"] is not None and outcome.observation is not None:
        observed = outcome.observation.get("steps")
        step = observed[int(match["step"])] if isinstance(observed, list) else None
        events = step.get("events") if isinstance(step, dict) else None
        types = event_types(events)
        index = int(match["index"])
        if index < len(types):
            words.add(types[index].lower())
    return words


def rank_clauses(case: Case, outcome: Outcome, clauses: Mapping[str, Clause]) -> list[str]:
    """The case's clause ids, those whose text names more of what diverged first (ties keep case order)."""
    words = divergence_words(case, outcome)

    def score(clause_id: str) -> int:
        clause = clauses.get(clause_id)
        text = clause.text.lower().replace("`", "") if clause else ""
        return sum(1 for word in words if re.search(rf"\b{re.escape(word)}\b", text))

    return sorted(case.clauses, key=lambda clause_id: -score(clause_id))


def _trace_lines(case: Case, outcome: Outcome) -> list[str]:
    divergence = outcome.divergence
    match = _EVENTS_PATH.match(divergence.path) if divergence else None
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
