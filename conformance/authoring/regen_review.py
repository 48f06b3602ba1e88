"""What ``fixtures regen`` says about each value it changes: the clause that decides it, and
whether the new value contradicts a string that clause quotes exactly.

A reference can be wrong too. When a cited clause quotes the old value exactly (the spec
says "`errorMessage` exactly `"ScriptedModel 没有更多响应"`") and the reference now gives
something else, the case is right and the reference is not: regen refuses that case, whoever
named it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from conformance.common.jsontypes import JsonValue
from conformance.common.value_paths import join_index, join_key
from conformance.judging.bearing import clause_hits
from conformance.judging.matcher import is_matcher, render
from conformance.model.clauses import Clause

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_EXCERPT = 160


@dataclass(frozen=True)
class Change:
    """One value regen would change."""

    path: str
    old: JsonValue
    new: JsonValue


def changes(old: JsonValue, new: JsonValue, path: str = "") -> Iterator[Change]:
    """The places where ``new`` differs from ``old``, as deep as both have the same shape."""
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict) and not is_matcher(old):
        for key in dict.fromkeys([*old, *new]):
            yield from changes(old.get(key), new.get(key), join_key(path, key))
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (before, after) in enumerate(zip(old, new, strict=True)):
            yield from changes(before, after, join_index(path, index))
        return
    yield Change(path, old, new)


def quoting_clause(value: JsonValue, cited: list[str], clauses: Mapping[str, Clause]) -> str | None:
    """The first cited clause whose text quotes the string ``value`` exactly (in quotes or backticks)."""
    if not isinstance(value, str) or not value:
        return None
    forms = (f'"{value}"', f"`{value}`")
    return next((clause_id for clause_id in cited if any(form in getattr(clauses.get(clause_id), "text", "") for form in forms)), None)


def deciding_clause(change: Change, cited: list[str], clauses: Mapping[str, Clause]) -> str | None:
    """The cited clause that quotes the old or new value, else the one naming most words of its path."""
    quoted = quoting_clause(change.old, cited, clauses) or quoting_clause(change.new, cited, clauses)
    if quoted is not None:
        return quoted
    words = {word.lower() for word in _WORD.findall(change.path)}
    return max(cited, key=lambda clause_id: clause_hits(clauses.get(clause_id), words), default=None)


def review(
    case_id: str, location: str, old: JsonValue, new: JsonValue, cited: list[str], clauses: Mapping[str, Clause]
) -> tuple[list[str], list[str]]:
    """Notes (each change with its clause) and contradictions (a change away from a value the spec quotes)."""
    notes: list[str] = []
    contradictions: list[str] = []
    for change in changes(old, new):
        clause_id = deciding_clause(change, cited, clauses)
        clause = clauses.get(clause_id) if clause_id else None
        text = " ".join(clause.text.split()) if clause else ""
        excerpt = text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"
        where = f"{location}: {case_id}: {change.path}: {render(change.old)} -> {render(change.new)}"
        notes.append(f"{where}\n    {clause_id}: {excerpt}" if clause_id else where)
        quoted = quoting_clause(change.old, cited, clauses)
        if quoted is not None:
            contradictions.append(
                f"{change.path}: the new value {render(change.new)} contradicts {quoted}, which quotes {render(change.old)} exactly; "
                "the reference is wrong here, not the case"
            )
    return notes, contradictions
