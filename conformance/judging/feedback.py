"""Turn an outcome into a message a student can act on without reading the suite's source."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from conformance.common.jsontypes import JsonValue
from conformance.judging.outcome import Outcome
from conformance.judging.readings import symptom_reading
from conformance.model.cases import Case
from conformance.model.clauses import Clause

_CLAUSE_TEXT_LIMIT = 200
_QUOTED_CLAUSES = 2
_EVENTS_PATH = re.compile(r"^steps\[(?P<step>\d+)\]\.events(?:\[(?P<index>\d+)\])?")
_PATH_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SYMPTOM = re.compile(r"^steps\[\d+\]\.(?P<step_key>[A-Za-z_]\w*)(?:\[\d+\]\.(?P<item_key>[A-Za-z_]\w*))?")
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


def failure_report(
    case: Case, outcome: Outcome, clauses: Mapping[str, Clause], clause_limit: int | None = _CLAUSE_TEXT_LIMIT, course_hints: bool = True
) -> str:
    """The full feedback for a failed or errored case.

    A symptom with a known reading (:func:`conformance.judging.readings.symptom_reading`, such as
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


def symptom_keys(path: str) -> set[str]:
    """The keys a divergence is about: ``steps[1].requests[0].messages`` -> ``{requests, messages}``.

    For a scenario: the step's observation key (unless it is the too common ``events``)
    and, inside an event or request list, the item's key. For a pure operation: the keys
    of the path below ``value``, or ``value`` itself.
    """
    match = _SYMPTOM.match(path)
    if match is not None:
        return {key for key in (match["step_key"], match["item_key"]) if key and key != "events"}
    keys = {key for key in _PATH_KEY.findall(path) if key != "value"}
    return keys or {"value"}


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


#: Observation keys a hint's condition names ("If section_order keeps ...", "If threw shows
#: ..."). A hint fits a divergence only when it names the deepest of these the divergence
#: reaches: a hint naming ``partial`` is about the partial's blocks, not a missing
#: ``partial.errorMessage``; one naming ``timestamp`` is not about an unexpected ``sections``,
#: and one naming ``sections`` (SYS-REPLAY-5) is not about the replayed ``content``.
HINT_KEYS: frozenset[str] = frozenset(
    {
        "value",
        "sections",
        "section_order",
        "timestamp",
        "partial",
        "requests",
        "threw",
        "finished",
        "state",
        "same_object_as",
        "errorMessage",
        "stopReason",
        "usage",
        "type",
        "input_unchanged",
        "turns_unchanged",
        "context",
        # chapter 05 (to_provider_messages, to_provider_tools, provider_model_stream, provider_fetch_stream)
        "tool_calls",
        "chunks",
        "abort_error",
        "request",
        "url",
        "headers",
        "body",
        # chapter 06 (object_schema, tool_registry, execute_tool_call)
        "json_schema",
        "keys",
        "error",
        "tool",
        "tools",
        "fresh_array",
        "result",
        "received",
        "params",
        "param_keys",
        "call_id",
        "signal",
        "report_progress",
        "progress",
        # chapter 07 (run_agent_loop; its result, requests, received and error are above)
        "trace",
        "stalled",
        "fresh_messages",
        "context_unchanged",
        # chapter 09's reducer (reduce_agent_state); not "messages" or "status", which name the
        # parts of other observations (a request's messages) whose own hints name a wider key
        "streamingText",
        "pendingToolCallIds",
        "activeRunId",
        "lastReason",
        "diagnostics",
        "same_object",
        "messages_detached",
    }
)
#: The course functions a hint may name, and the operations whose divergence they can explain.
#: A hint that sends a student to another function than the one the case called is left out.
HINT_FUNCTIONS: Mapping[str, frozenset[str]] = {
    "textOf": frozenset({"text_of"}),
    "systemMessageText": frozenset({"system_message_text", "text_of", "current_system_prompt"}),
    "currentSystemMessage": frozenset({"current_system_message"}),
    "currentSystemPrompt": frozenset({"current_system_prompt"}),
}
# A key written as code (``message.content``, ``turns[cursor]``) is not the hint's condition.
_NAMED_WORD = re.compile(r"(?<![.\w])[A-Za-z_]\w*(?![\w(\[])")


def divergence_keys(path: str, key: str = "") -> list[str]:
    """The keys of a divergence, outermost first, its unexpected key last.

    ``steps[2].events[0].partial.errorMessage`` -> ``[steps, events, partial, errorMessage]``.
    """
    keys = _PATH_KEY.findall(path)
    return [*keys, key] if key else keys


def hint_keys(hint: str) -> set[str]:
    """The observation keys (:data:`HINT_KEYS`) a hint rung names as words, not as code."""
    return {word for word in _NAMED_WORD.findall(hint) if word in HINT_KEYS}


def fitting_hint(case: Case, outcome: Outcome) -> str | None:
    """The case's first hint rung, when it is about what diverged; else None.

    A case's hints are written for the bug the case targets, and they name what that bug
    changes (``If value shows a tool name ...``, ``If an early event's partial ...``). A case
    that fails for another reason (a timeout, a crash, another key) gets no hint rather than
    advice about a bug it does not have. The rung fits when it names the deepest observation
    key of :data:`HINT_KEYS` on the divergence's path (its unexpected key included), and
    names no course function other than the one the case calls.
    """
    divergence = outcome.divergence
    if not case.hint or divergence is None:
        return None
    hint = case.hint[0]
    named = [key for key in divergence_keys(divergence.path, divergence.key) if key in HINT_KEYS]
    if not named or named[-1] not in hint_keys(hint):
        return None
    words = set(_PATH_KEY.findall(hint))
    if any(case.operation not in operations for function, operations in HINT_FUNCTIONS.items() if function in words):
        return None
    return hint


def unshowable_hint(case: Case) -> str | None:
    """Why the case's first hint rung can never be shown by :func:`fitting_hint`, or None when some failure can show it."""
    if not case.hint:
        return None
    hint = case.hint[0]
    words = set(_PATH_KEY.findall(hint))
    elsewhere = sorted(
        function for function, operations in HINT_FUNCTIONS.items() if function in words and case.operation not in operations
    )
    if elsewhere:
        return (
            f"names {', '.join(elsewhere)}, which a {case.operation} case does not check: a hint never sends a student "
            "to another function than the one the case checks, so this one is never shown; name the place without it"
        )
    if not hint_keys(hint):
        return (
            "names none of the observation keys a failure is matched by, so it is never shown; name the key the bug "
            f"changes as a plain word, not as code (one of: {', '.join(sorted(HINT_KEYS))}), e.g. 'If value ...'"
        )
    return None


def silent_stream_line(case: Case, outcome: Outcome) -> str | None:
    """A plain sentence when a consume step saw no event at all where events were expected."""
    if not is_silent_stream(case, outcome):
        return None
    return (
        "0 events: no event arrived within the settle deadline and the stream did not end; "
        "stream() never pushed anything (is the producer ever started?)"
    )


def is_silent_stream(case: Case, outcome: Outcome) -> bool:
    """True when the case's first divergence is a consume step that saw no event, and the stream did not end."""
    if outcome.observation is None or outcome.step_index is None or not case.is_scenario:
        return False
    step = case.steps[outcome.step_index]
    expected = step.get("expect")
    if step.get("action") != "consume" or not isinstance(expected, dict) or not expected.get("events"):
        return False
    observed_steps = outcome.observation.get("steps")
    observed = observed_steps[outcome.step_index] if isinstance(observed_steps, list) else None
    return isinstance(observed, dict) and observed.get("events") == [] and observed.get("finished") is False


def divergence_words(case: Case, outcome: Outcome) -> set[str]:
    """Words that say what diverged: the path's keys and the event type at the diverged event."""
    divergence = outcome.divergence
    if divergence is None:
        return set()
    words: set[str] = set()
    for key in divergence_keys(divergence.path, divergence.key):
        if key not in _PLAIN_KEYS:
            words.add(key.lower())
            words.update(_KEY_WORDS.get(key, ()))
    if is_silent_stream(case, outcome):
        # Nothing was produced at all: the clauses about deferred production come first.
        words.update(("produce", "production", "deferred", "plays", "played"))
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
    """The case's clause ids, the one to quote first first.

    First comes the earliest clause in the case's own order whose text bears on the divergence
    (it quotes the diverging value exactly, or names some of what diverged): the author lists
    first what the case checks (spec/fixture-format.md), so a later clause that names more of
    the words never goes above it. When none bears on it, the case's first clause. The others
    follow: one that quotes the value, then those that name more of what diverged (ties keep
    case order).
    """
    words = divergence_words(case, outcome)
    quoted = diverging_strings(outcome)

    def rank(clause_id: str) -> tuple[bool, int]:
        clause = clauses.get(clause_id)
        return (not quotes_value(clause, quoted), -clause_hits(clause, words))

    bearing = [clause_id for clause_id in case.clauses if rank(clause_id) != (True, 0)]
    first = bearing[:1] or list(case.clauses[:1])
    return first + sorted((clause_id for clause_id in case.clauses if clause_id not in first), key=rank)


def quotes_value(clause: Clause | None, quoted: list[str]) -> bool:
    """True when the clause's text quotes one of the diverging values (:func:`diverging_strings`) exactly."""
    return clause is not None and any(text in clause.text for text in quoted)


def diverging_strings(outcome: Outcome) -> list[str]:
    """The expected and observed values at the divergence, when they are whole strings of some length."""
    divergence = outcome.divergence
    found: list[str] = []
    for rendered in (divergence.expected, divergence.actual) if divergence is not None else ():
        try:
            value = json.loads(rendered)
        except ValueError:  # cut short, or not JSON (a missing key)
            continue
        # A short string ("a", "stop") is quoted by many clauses without being decided by them.
        if isinstance(value, str) and len(value) >= 6:
            found.append(value)
    return found


def clause_hits(clause: Clause | None, words: set[str]) -> int:
    """How many of ``words`` (what diverged) the clause's text names."""
    text = clause.text.lower().replace("`", "") if clause else ""
    return sum(1 for word in words if re.search(rf"\b{re.escape(word)}\b", text))


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
