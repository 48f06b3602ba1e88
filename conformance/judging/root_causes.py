"""One bug in one function is one cause, reported at that function, before the functions that use it.

A ``systemMessageText`` that joins the sections before the content fails its own cases, and
also ``currentSystemPrompt``'s and ``textOf``'s, which call it: three places, one bug. The
profile says which operation's function uses which (``Profile.uses``). A cause seen only in
cases of functions that use another failing cause's function, where every one of those cases
cites a clause that cause breaks, is that cause: it is merged into it. A cause breaks the
clause most of its cases cite first, and the clause whose text bears most on what diverged
(:func:`conformance.judging.bearing.clause_hits`): a ``currentSystemMessage`` that keeps a
re-added section in its old place diverges in ``section_order``, which SYS-REPLAY-4 decides,
though its cases cite SYS-REPLAY-3 first; a ``currentSystemPrompt`` case that cites
SYS-REPLAY-4 shows that one bug. The causes left are ordered root first: a cause whose
function another cause's function uses comes before it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from conformance.judging.bearing import clause_hits, divergence_words
from conformance.judging.outcome import Outcome
from conformance.model.cases import BrokenCase, Case
from conformance.model.clauses import Clause
from conformance.model.profiles import PROFILES

Member = tuple[Case | BrokenCase, Outcome]
K = TypeVar("K", bound=Hashable)


def depth(case: Case | BrokenCase) -> int:
    """How many functions the case's function stands on: 0 for a root (``systemMessageText``)."""
    if not isinstance(case, Case) or case.profile not in PROFILES:
        return 0
    return len(PROFILES[case.profile].uses_transitively(case.operation))


def merged_into_roots(groups: dict[K, list[Member]], clauses: Mapping[str, Clause] | None = None) -> dict[K, list[Member]]:
    """``groups`` with each downstream cause's members moved into its root cause (see the module's text)."""
    own = {key: _operations(members) for key, members in groups.items()}
    own_clause = {key: _broken_clauses(members, clauses or {}) for key, members in groups.items()}
    merged = {key: list(members) for key, members in groups.items()}
    # Deepest first, so a chain (a user of a user) ends at the root.
    for key in sorted(groups, key=lambda key: -max((depth(case) for case, _ in groups[key]), default=0)):
        root = _root_of(key, groups, own, own_clause)
        if root is not None and key in merged and root in merged:
            merged[root].extend(merged.pop(key))
    return merged


def root_first(keys: Sequence[K], members: Mapping[K, Sequence[Member]]) -> list[K]:
    """``keys`` in their order, except that a cause whose function another's uses moves before it."""
    ordered = list(keys)
    operations = {key: _operations(members[key]) for key in keys}
    moved = True
    while moved:
        moved = False
        for index, key in enumerate(ordered):
            earlier = next((position for position in range(index) if _uses(ordered[position], key, operations)), None)
            if earlier is not None:
                ordered.insert(earlier, ordered.pop(index))
                moved = True
                break
    return ordered


def _root_of(key: K, groups: dict[K, list[Member]], own: dict[K, set[tuple[str, str]]], own_clause: dict[K, frozenset[str]]) -> K | None:
    members = groups[key]
    if not own[key] or any(not isinstance(case, Case) for case, _ in members):
        return None
    candidates = [
        other
        for other in groups
        if other != key
        and own[other]
        and own_clause[other]
        and all(_stands_on(operation, own[other]) for operation in own[key])
        and all(isinstance(case, Case) and own_clause[other] & set(case.clauses) for case, _ in members)
    ]
    return max(candidates, key=lambda other: len(groups[other]), default=None)


def _stands_on(operation: tuple[str, str], roots: set[tuple[str, str]]) -> bool:
    profile, name = operation
    used = PROFILES[profile].uses_transitively(name) if profile in PROFILES else frozenset()
    return any(root_profile == profile and root in used for root_profile, root in roots)


def _uses(user: K, used: K, operations: dict[K, set[tuple[str, str]]]) -> bool:
    return bool(operations[used]) and all(_stands_on(operation, operations[used]) for operation in operations[user])


def _operations(members: Iterable[Member]) -> set[tuple[str, str]]:
    return {(case.profile, case.operation) for case, _ in members if isinstance(case, Case)}


def _broken_clauses(members: Sequence[Member], clauses: Mapping[str, Clause]) -> frozenset[str]:
    """The clauses the cause breaks: the one most of its cases cite first, and the one whose text bears most on what diverged."""
    cases = [(case, outcome) for case, outcome in members if isinstance(case, Case) and case.clauses]
    firsts = Counter(case.clauses[0] for case, _ in cases)
    bearing: Counter[str] = Counter()
    for case, outcome in cases:
        words = divergence_words(case, outcome)
        hits = {clause_id: clause_hits(clauses.get(clause_id), words) for clause_id in case.clauses}
        best = max(hits.values(), default=0)
        # Only a clause that bears more than the others: a tie says nothing about which one decides.
        if best > 0 and list(hits.values()).count(best) == 1:
            bearing[max(hits, key=lambda clause_id: hits[clause_id])] += 1
    found = [counted.most_common(1)[0][0] for counted in (firsts, bearing) if counted]
    return frozenset(found)
