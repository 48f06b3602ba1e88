"""Group failing cases by cause, so one bug that fails ninety cases reads as one line.

A cause is where the divergence is, with indexes normalised and cut below the first key of
an event or request (``steps[*].events[*].partial``, ``steps[*].requests[*].messages``,
``value``): one bug shows at many depths and with many values, but in one place. The
group's title adds the first case's divergence as an example. A case without a divergence
(a timeout, a crash, an exception) is grouped by its message with its variable numbers
(indexes, counts, timings) normalised; digits that belong to a name (``pi-ai-1``, ``sha256``)
or an exit status or signal (``status 2``) are kept, since they tell causes apart.

Each group names the clause it breaks: among the clauses its cases check, the one whose
text names most of what diverged, then the one most of them cite.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from conformance.cases import BrokenCase, Case
from conformance.clauses import Clause
from conformance.execution import Outcome
from conformance.feedback import clause_hits, divergence_words

_INDEX = re.compile(r"\[\d+\]")
# A scenario step's key and, inside an event or request list, the item's key; else two keys.
_PLACE = re.compile(r"^steps\[\*\]\.\w+(?:\[\*\]\.\w+)?|^\w+(?:\.\w+)?")
# A number standing alone: not glued to a word before it (``sha256``, ``v1.2``, ``pi-ai-1``) nor after
# it (``2nd``, ``3-way``) except by a unit (``12ms``, ``1.5s``, ``40%``), which is part of a measurement.
_NUMBER = re.compile(r"(?<![\w.])(?<!\w-)\d+(?:\.\d+)?(?=(?:ms|us|µs|ns|s|kb|kib|mb|mib|gb|%)?(?![\w.-]?\w))", re.IGNORECASE)
# Numbers that name a cause, not measure one: an exit status, a signal, an error number, a lab.
_NAMING_WORD = re.compile(r"\b(?:status|code|signal|errno|lab|chapter|profile)\s*[:=#]?\s*$", re.IGNORECASE)
_PATTERN_LIMIT = 200


@dataclass(frozen=True)
class FailureGroup:
    """Failing cases that share one cause."""

    clause: str | None
    pattern: str
    members: tuple[tuple[Case | BrokenCase, Outcome], ...]

    @property
    def title(self) -> str:
        """``SM-PLAY-3  steps[*].events[*].partial (e.g. steps[1].events[0].partial.content: expected 0 items ...)``."""
        head = f"{self.clause}  {self.pattern}" if self.clause else self.pattern
        divergence = self.members[0][1].divergence
        return f"{head}  (e.g. {_cut(str(divergence))})" if divergence is not None else head


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


def cause(case: Case | BrokenCase, outcome: Outcome) -> str:
    """The normalised place (or message) a failing case is grouped by."""
    divergence = outcome.divergence
    if isinstance(case, BrokenCase):
        return "broken fixture"
    if divergence is None:
        first_line = outcome.message.strip().splitlines()[0] if outcome.message.strip() else outcome.status
        return _cut(variable_numbers_normalised(first_line))
    path = normalise_path(divergence.path)
    match = _PLACE.match(path)
    return match[0] if match else path or "(root)"


def group_failures(results: Iterable[tuple[Case | BrokenCase, Outcome]], clauses: Mapping[str, Clause]) -> list[FailureGroup]:
    """Failed and errored cases grouped by cause, the largest group first (ties: first seen first)."""
    groups: dict[str, list[tuple[Case | BrokenCase, Outcome]]] = {}
    for case, outcome in results:
        if outcome.status in ("failed", "errored"):
            groups.setdefault(cause(case, outcome), []).append((case, outcome))
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    return [FailureGroup(_group_clause(members, clauses), pattern, tuple(members)) for pattern, members in ordered]


def _group_clause(members: Sequence[tuple[Case | BrokenCase, Outcome]], clauses: Mapping[str, Clause]) -> str | None:
    """The clause a group breaks: the one whose text names most of what diverged, then the one most of its cases cite."""
    cases = [(case, outcome) for case, outcome in members if isinstance(case, Case)]
    if not cases or cases[0][1].divergence is None:
        return None
    words = divergence_words(*cases[0])
    candidates = sorted({clause for case, _ in cases for clause in case.clauses})
    citations = {clause: sum(clause in case.clauses for case, _ in cases) for clause in candidates}
    return max(candidates, key=lambda clause: (clause_hits(clauses.get(clause), words), citations[clause]))


def skip_reasons(outcomes: Sequence[Outcome]) -> list[tuple[str, int]]:
    """Distinct skip reasons with their counts, most frequent first."""
    counts: dict[str, int] = {}
    for outcome in outcomes:
        if outcome.status == "skipped":
            counts[outcome.message] = counts.get(outcome.message, 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])


def _cut(text: str) -> str:
    return text if len(text) <= _PATTERN_LIMIT else text[: _PATTERN_LIMIT - 1] + "…"
