"""Group failing cases by cause, so one bug that fails ninety cases reads as one line.

A cause is a divergence's *place* and *kind*:

- the place is its path with indexes normalised and with its key: a scenario step's key
  and, inside an event or request list, the item's key and one key below it
  (``steps[*].events[*].partial.errorMessage``, ``steps[*].requests[*].messages``); for a
  pure operation two keys (``value.timestamp``); an unexpected key is part of its place
  (``value.sections``), although the matcher reports it at the parent;
- the kind is what differs there: ``missing``, ``unexpected``, another ``type``, another
  ``value``, or ``threw`` (a step that threw where it should not); below the place, only
  that the place's value differs.

So one bug that shows at many depths of one place is one group, and two bugs that both
show under ``partial`` (a partial shared between events, a lost ``errorMessage``) are two.

A case without a divergence is grouped by what happened, not by the words of its message:
an implementation that died while loading a module is one cause whichever case found it
first; a timeout or a hang by the operation that never returned; anything else by its
message with its variable numbers (indexes, counts, timings) normalised, while digits that
belong to a name (``pi-ai-1``, ``sha256``) or an exit status or signal (``status 2``) are kept.

Each group names the clause it breaks: the first clause of its example case (a member of the
group), which the example's feedback quotes first too, so a heading and its example never name
two clauses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from conformance.common.value_paths import join_key
from conformance.judging.bearing import rank_clauses
from conformance.judging.outcome import Outcome
from conformance.judging.root_causes import depth, merged_into_roots, root_first
from conformance.judging.shared_symptoms import linked
from conformance.model.cases import BrokenCase, Case
from conformance.model.clauses import Clause

_INDEX = re.compile(r"\[\d+\]")
# A scenario step's key and, inside an event or request list, the item's key and one below it; else two keys.
_PLACE = re.compile(r"^steps\[\*\]\.\w+(?:\[\*\]\.\w+(?:\.\w+)?|\.\w+)?|^\w+(?:\.\w+)?")
# An operation that observes a whole run at once (pi-agent-core-1's agent_loop: events, trace, requests,
# result, hooks, each a list) places a divergence in one of its lists as a step's list is placed: the
# item's key and one below (``result[*].role``, ``requests[*].messages[*].role``), or the item itself (``trace[*]``). Placed at the list
# alone, a runtime lacking two features (no tool declaration, no thinkingLevel) reads as one cause.
_WHOLE_RUN_OPERATIONS = frozenset({"agent_loop", "agent"})
_RUN_PLACE = re.compile(r"^\w+\[\*\](?:\.\w+(?:\[\*\])?(?:\.\w+)?)?")
# The Agents (the course's run_agent, pi-agent-core-1's agent) observe named prompts and
# snapshots: a name is the case's own (``prompts.parallel``, ``snapshots.held``), so it is placed
# as a list item. Inside the upstream Agent's state a divergence is placed at the message's key
# (``state.messages[*].thinkingLevel``), so that a missing system message and a missing
# thinkingLevel stay two causes.
_NAMED = re.compile(r'^(prompts|snapshots)(?:\.[^.\[]+|\["[^"]*"\])')
_NAMING_OPERATIONS = frozenset({"agent", "run_agent"})
_AGENT_PLACE = re.compile(r"^\w+(?:\.\w+)?\[\*\](?:\.\w+(?:\[\*\])?){0,3}")
_RUN_ENUM_LIMIT = 48  # a trace line: "tool_execution_end:fast-call", quoted
# Keys whose values are themselves kinds (an event type, a settled state): which one was
# expected and which came is part of the cause ("error" where "start" came is another bug
# than "start" where "error" came).
_ENUM_KEYS = frozenset(
    {"type", "state", "finished", "stopReason", "reason", "role", "same_object_as", "input_unchanged", "turns_unchanged"}
)
_ENUM_LIMIT = 24
# A number standing alone: not glued to a word before it (``sha256``, ``v1.2``, ``pi-ai-1``) nor after
# it (``2nd``, ``3-way``) except by a unit (``12ms``, ``1.5s``, ``40%``), which is part of a measurement.
_NUMBER = re.compile(r"(?<![\w.])(?<!\w-)\d+(?:\.\d+)?(?=(?:ms|us|µs|ns|s|kb|kib|mb|mib|gb|%)?(?![\w.-]?\w))", re.IGNORECASE)
# Numbers that name a cause, not measure one: an exit status, a signal, an error number, a lab.
_NAMING_WORD = re.compile(r"\b(?:status|code|signal|errno|lab|chapter|profile)\s*[:=#]?\s*$", re.IGNORECASE)
# "<name> exited with status 3 during scripted_model while loading dist/src/scripted-model.js (...)"
_LOAD_DEATH = re.compile(
    r"(?P<how>exited with status -?\d+|was killed by [\w ]+?|stopped answering) during \S+ while loading (?P<module>[^\s()]+)"
)
# A handshake that failed, first or after the last retry: one cause, its reason.
_HANDSHAKE = re.compile(
    r"(?:the handshake failed: |failed its handshake \d+ times in a row and is not started again; last failure: )(?P<reason>.*)"
)
_PATTERN_LIMIT = 200
#: How each kind reads after its place.
KIND_WORDS: Mapping[str, str] = {
    "missing": "missing",
    "unexpected": "unexpected",
    "type": "another type",
    "value": "another value",
    "threw": "threw",
    "died": "the program died",
    "timed out": "never returned (timed out)",
    "hung": "never settled (hung)",
    "error": "error",
    "order": "the same lines in another order",
    "blank lines": "the same lines, with blank lines missing or added between them",
    "extra text": "lines that should not be there",
    "missing text": "lines missing",
    "broken": "broken fixture",
}


@dataclass(frozen=True)
class Cause:
    """Where a case diverged and how (or, without a divergence, what happened)."""

    place: str
    kind: str
    #: For a key whose values are kinds: ``"error" where "start"`` (expected, then actual); else "".
    detail: str = ""

    def __str__(self) -> str:
        if self.kind == "died":
            how = self.detail.replace("exited with status", "exit status").replace("was killed by", "killed by")
            return f"the program ended while importing {self.place} ({how}): code at the top level of that module ends the process"
        if self.detail:
            return f"{self.place}: {self.detail}"
        if self.kind in ("error", "broken"):
            return self.place
        return f"{self.place}: {KIND_WORDS.get(self.kind, self.kind)}"


@dataclass(frozen=True)
class FailureGroup:
    """Failing cases that share one cause."""

    clause: str | None
    pattern: str
    members: tuple[tuple[Case | BrokenCase, Outcome], ...]
    kind: str = "value"
    detail: str = ""
    #: Ids of the members whose own first divergence is another symptom of the cause (:mod:`conformance.judging.shared_symptoms`).
    linked: frozenset[str] = frozenset()

    @property
    def cause(self) -> Cause:
        """The group's cause."""
        return Cause(self.pattern, self.kind, self.detail)

    @property
    def example(self) -> tuple[Case | BrokenCase, Outcome]:
        """The member that shows the cause best: its own (not a linked one), in the function the others use, nearest its origin.

        Nearest its origin is :func:`origin_rank`; ties go to the first member.
        """
        return min(self.members, key=lambda member: (member[0].id in self.linked, depth(member[0]), origin_rank(member[1])))

    @property
    def title(self) -> str:
        """``SM-PLAY-3  steps[*].events[*].partial.content: another value (e.g. steps[1].events[0].partial.content: ...)``."""
        head = f"{self.clause}  {self.cause}" if self.clause else str(self.cause)
        divergence = self.example[1].divergence
        return f"{head}  (e.g. {_cut(str(divergence))})" if divergence is not None else head


def origin_rank(outcome: Outcome) -> tuple[int, int]:
    """Lower for a divergence nearer where a symptom originates: the result or the terminal event, then fewer events in.

    A key that diverges the same way in many places is best shown where it is made (the
    terminal message, the value) rather than in a partial copy at the first event of an
    unrelated case.
    """
    divergence = outcome.divergence
    if divergence is None:
        return (2, 0)
    path = divergence.path
    event = re.search(r"\.events\[(\d+)\]", path)
    terminal = re.search(r"\.(?:message|error)\b|^value\b|\.value\b|\.result\b", path)
    if terminal and not re.search(r"\.partial\b", path):
        return (0, len(path))
    return (1, int(event[1]) if event else 0)


def normalise_path(path: str) -> str:
    """``steps[1].events[0].partial`` -> ``steps[*].events[*].partial``."""
    return _INDEX.sub("[*]", path)


def variable_numbers_normalised(message: str) -> str:
    """``timed out after 3 of 5 tries, events[4]`` -> ``timed out after N of N tries, events[*]``; names keep their digits.

    ``--profile pi-ai-1`` and ``exited with status 2`` stay as they are: two messages that
    differ there have different causes, while messages that differ only in an index, a count
    or a time have the same one.
    """
    message = _INDEX.sub("[*]", message)

    def replace(number: re.Match[str]) -> str:
        return number[0] if _NAMING_WORD.search(message, 0, number.start()) else "N"

    return _NUMBER.sub(replace, message)


def cause_of(case: Case | BrokenCase, outcome: Outcome) -> Cause:
    """The cause a failing case is grouped by."""
    if isinstance(case, BrokenCase):
        return Cause("broken fixture", "broken")
    divergence = outcome.divergence
    if divergence is None:
        return _event_cause(case, outcome)
    full = normalise_path(join_key(divergence.path, divergence.key) if divergence.key else divergence.path)
    if case.operation in _NAMING_OPERATIONS:
        full = _NAMED.sub(r"\1[*]", full)
    run_place = _AGENT_PLACE if case.operation == "agent" else _RUN_PLACE
    match = (case.operation in _WHOLE_RUN_OPERATIONS and run_place.match(full)) or _PLACE.match(full)
    place = match[0] if match else full or "(root)"
    kind = divergence.kind if place == full else "value"
    last = place.rsplit(".", 1)[-1]
    if last == "threw" and divergence.actual != "null":
        kind = "threw"
    detail = ""
    # A whole run's trace lines are kinds too: a system message missing is another bug than a turn too many.
    run_kind = case.operation in _WHOLE_RUN_OPERATIONS and place.endswith("[*]")
    limit = _RUN_ENUM_LIMIT if run_kind else _ENUM_LIMIT
    if place == full and (last in _ENUM_KEYS or run_kind) and max(len(divergence.expected), len(divergence.actual)) <= limit:
        detail = f"expected {divergence.expected}, got {divergence.actual}"
    elif kind == "value" and place == full:
        kind = _text_reading(divergence.expected, divergence.actual) or kind
    operation = case.operation if not case.is_scenario else ""
    return Cause(f"{operation} {place}" if operation else place, kind, detail)


def _text_reading(expected: str, actual: str) -> str | None:
    """For two texts: ``order`` (the same lines, reordered), ``blank lines``, ``extra text`` or ``missing text``."""
    try:
        wanted, got = json.loads(expected), json.loads(actual)
    except ValueError:
        return None
    if not isinstance(wanted, str) or not isinstance(got, str):
        return None
    if sorted(wanted.split("\n")) == sorted(got.split("\n")):
        return "order"  # every line, blank ones included, is there as often: only their order differs
    wanted_lines, got_lines = [line for line in wanted.split("\n") if line], [line for line in got.split("\n") if line]
    if wanted_lines == got_lines:
        return "blank lines"
    if set(wanted_lines) < set(got_lines):
        return "extra text"
    if set(got_lines) < set(wanted_lines):
        return "missing text"
    return None


def _event_cause(case: Case, outcome: Outcome) -> Cause:
    message = outcome.message.strip()
    death = _LOAD_DEATH.search(message)
    if death is not None:
        return Cause(death["module"], "died", death["how"])
    handshake = _HANDSHAKE.search(message.splitlines()[0] if message else "")
    if handshake is not None:
        return Cause(_cut("the handshake failed: " + variable_numbers_normalised(handshake["reason"])), "error")
    if outcome.hung:
        return Cause(case.operation, "hung")
    if outcome.timed_out and message.startswith(("timed out", "not run:")):
        return Cause(case.operation, "timed out")
    first_line = message.splitlines()[0] if message else outcome.status
    return Cause(_cut(variable_numbers_normalised(first_line)), "error")


def cause(case: Case | BrokenCase, outcome: Outcome) -> str:
    """The cause a failing case is grouped by, as text."""
    return str(cause_of(case, outcome))


def group_failures(results: Iterable[tuple[Case | BrokenCase, Outcome]], clauses: Mapping[str, Clause]) -> list[FailureGroup]:
    """Failed and errored cases grouped by cause, the largest group first (ties: first seen first)."""
    groups: dict[Cause, list[tuple[Case | BrokenCase, Outcome]]] = {}
    for case, outcome in results:
        if outcome.status in ("failed", "errored"):
            groups.setdefault(cause_of(case, outcome), []).append((case, outcome))
    merged = merged_into_roots(_at_origin(groups), clauses)
    # Computed once: merging causes of one place and clause leaves the clause as it was.
    clause_of = {found: _group_clause(members, clauses) for found, members in merged.items()}
    merged = _one_cause_per_place(merged, clause_of)
    # Causes one case shows together are one bug's symptoms: each joins the largest of them. A step
    # that threw is a cause of its own: what the case shows after it may follow from it (a stream
    # whose end() threw never finishes), so it is never folded into what follows.
    linkable = {found: members for found, members in merged.items() if found.kind not in ("threw", *_PLACELESS_KINDS)}
    linked_ids: dict[Cause, set[str]] = {}
    for found, named_by in linked(linkable, cause_of).items():
        linked_ids.setdefault(named_by, set()).update(case.id for case, _ in merged[found])
        merged[named_by] = merged[named_by] + merged.pop(found)
    ordered = root_first(sorted(merged, key=lambda found: -len(merged[found])), merged)
    return [
        FailureGroup(clause_of[found], found.place, tuple(merged[found]), found.kind, found.detail, frozenset(linked_ids.get(found, ())))
        for found in ordered
    ]


#: Kinds of cause that are no divergence at a place (an error message, a death, a hang): never merged by place.
_PLACELESS_KINDS = frozenset({"died", "timed out", "hung", "error", "broken"})
#: Keys too general to say that two places show one symptom.
_GENERAL_KEYS = frozenset({"value", "events", "content", "partial", "type", "steps", "requests", "messages"})


def _at_origin(groups: dict[Cause, list[tuple[Case | BrokenCase, Outcome]]]) -> dict[Cause, list[tuple[Case | BrokenCase, Outcome]]]:
    """Causes whose place ends in the same specific key diverging the same way, merged at the place nearest its origin.

    A terminal message that lacks ``errorMessage`` shows in every partial of every event
    too; one cause, reported where it is made (the result, the terminal event), not once per copy.
    """
    by_symptom: dict[tuple[str, str, str], list[Cause]] = {}
    for found in groups:
        key = re.split(r"[.\s]", found.place)[-1]
        if "." in found.place and key not in _GENERAL_KEYS and found.kind not in _PLACELESS_KINDS:
            by_symptom.setdefault((key, found.kind, found.detail), []).append(found)
    merged = dict(groups)
    for causes in by_symptom.values():
        if len(causes) < 2:
            continue
        origin = min(causes, key=lambda found: min(origin_rank(outcome) for _, outcome in groups[found]))
        for found in causes:
            if found != origin:
                merged[origin] = merged[origin] + merged.pop(found)
    return merged


def _one_cause_per_place(
    groups: dict[Cause, list[tuple[Case | BrokenCase, Outcome]]], clause_of: Mapping[Cause, str | None]
) -> dict[Cause, list[tuple[Case | BrokenCase, Outcome]]]:
    """Causes at one place under one clause, merged into the largest of them, whatever their kinds.

    A ScriptedModel that records the caller's context by reference shows in ``requests[*].messages``
    as another value in some cases and as an unexpected item in others: one bug, not two. What
    came at a key whose values are kinds still tells causes apart: an abort missed (``"start"``
    where ``"error"`` was expected) and a turn replayed (``"error"`` where ``"start"`` was) are
    two bugs at one event type; the same thing where two things were expected is one (a
    ``result()`` that rejects where it should stay pending, and where it should resolve with
    the ``end`` argument: a stream that rejects whenever it ends without a terminal event).
    """
    by_place: dict[tuple[str, str, str], list[Cause]] = {}
    for found in groups:
        clause = clause_of[found]
        if clause is not None and found.kind not in _PLACELESS_KINDS:
            came = found.detail.rsplit(", got ", 1)[-1]  # "expected X, got Y" -> Y ("" -> "")
            by_place.setdefault((found.place, clause, came), []).append(found)
    merged = dict(groups)
    for causes in by_place.values():
        largest = max(causes, key=lambda found: len(groups[found]))
        for found in causes:
            if found != largest:
                merged[largest] = merged[largest] + merged.pop(found)
    return merged


def _group_clause(members: Sequence[tuple[Case | BrokenCase, Outcome]], clauses: Mapping[str, Clause]) -> str | None:
    """The clause a group breaks: its example's own first clause, the one its feedback quotes first (feedback.rank_clauses)."""
    cases = [(case, outcome) for case, outcome in members if isinstance(case, Case)]
    if not cases:
        return None
    example, outcome = min(cases, key=lambda member: (depth(member[0]), origin_rank(member[1])))  # as FailureGroup.example
    if outcome.divergence is None:
        return None
    return rank_clauses(example, outcome, clauses)[0] if example.clauses else None


def skip_reasons(outcomes: Sequence[Outcome]) -> list[tuple[str, int]]:
    """Distinct skip reasons with their counts, most frequent first."""
    counts: dict[str, int] = {}
    for outcome in outcomes:
        if outcome.status == "skipped":
            counts[outcome.message] = counts.get(outcome.message, 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])


def _cut(text: str) -> str:
    return text if len(text) <= _PATTERN_LIMIT else text[: _PATTERN_LIMIT - 1] + "…"
