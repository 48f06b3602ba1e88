"""What a divergence bears on: the clauses that decide it, and the hint rung that fits it.

This is judging, not wording: which of a case's clauses to quote first (:func:`rank_clauses`),
whether its first hint rung is about what diverged (:func:`fitting_hint`) or can never be shown
(:func:`unshowable_hint`), whether a stream stayed silent. The words a student reads are
:mod:`conformance.feedback`'s, which asks these questions.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping

from conformance.common.jsontypes import JsonValue
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.model.clauses import Clause

#: A path into a scenario step's events: ``steps[STEP].events[INDEX]`` (the index optional).
EVENTS_PATH = re.compile(r"^steps\[(?P<step>\d+)\]\.events(?:\[(?P<index>\d+)\])?")


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


def event_types(events: JsonValue) -> list[str]:
    """The ``type`` of each event in a list (``?`` for anything that is not an event)."""
    if isinstance(events, dict) and "$oneOf" in events and isinstance(events["$oneOf"], list) and events["$oneOf"]:
        events = events["$oneOf"][0]
    if not isinstance(events, list):
        return []
    return [str(event.get("type", "?")) if isinstance(event, dict) else "?" for event in events]


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
        # chapter 09's Agent (run_agent)
        "signals",
        "prompts",
        "snapshots",
        "deliveries",
        "actions",
        "system_prompt",
        "prompt_options_unchanged",
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
    match = EVENTS_PATH.match(divergence.path)
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
    named = _words_of(text)
    # A word of word characters is named exactly when it is one of the text's runs of them (what
    # ``\bword\b`` finds); only a phrase ("same object") needs the search. Grouping asks this for
    # every case of every cause, several times per submission.
    return sum(1 for word in words if (word in named if _RUN.fullmatch(word) else re.search(rf"\b{re.escape(word)}\b", text)))


_RUN = re.compile(r"\w+")


@functools.lru_cache(maxsize=1024)
def _words_of(text: str) -> frozenset[str]:
    """The text's runs of word characters."""
    return frozenset(_RUN.findall(text))
