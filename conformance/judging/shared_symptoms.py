"""Causes that one case shows together are one cause: a bug's symptoms, not several bugs.

A case's first divergence names its cause, but one bug shows different first divergences in
cases that check different things first. An ``AssistantMessageEventStream`` that does not
treat ``error`` as terminal leaves one case's consumer unfinished (``finished``), another's
``result()`` pending (``state``), lets a third deliver an event after the error (``events``)
and a fourth's result be replaced by a later ``done`` (``value.content``): four first
divergences. Yet the case whose result stays pending is also left unfinished, the case that
delivers the extra event is unfinished too, and the case whose result was replaced also
delivers the extra event. Each of these cases shows two of the causes: they are symptoms of
one bug.

So a case's *symptoms* are read from its whole recorded observation: per step and per
expected key (for a pure operation, per key and one key below it: ``result.reason``,
``result.messages``), the first divergence there. A key that another key of the same step
decides is no symptom of its own once that key diverged: a result that is still pending has
no value to compare, and a value that is missing or another has no identity to check
(``same_object_as`` then says nothing new). A case's first divergence is its first symptom.

Two causes of one function are linked when some symptom is shown by at least half of the
cases of each: most cases of a cause show it, so it is what the cause is about. A stream's
pending result shows in its one case as a consumer left unfinished too, the cause of three
other cases; a loop whose batch rejects when one tool call fails shows ``result: null``
(nothing returned) in every case, whichever key diverged first. Linked causes are one, and
the largest names it. The members of the smaller causes stay in it as *linked* members,
shown after the largest cause's own (:attr:`conformance.judging.failure_groups.FailureGroup.linked`).

Two bugs stay two. A case caught by both shows both symptoms, but such cases are few among
either bug's own (a partial shared between events and a lost ``errorMessage``: 2 of 56 and
2 of 14); a symptom that a used function's bug leaves in its users' cases (a result copied
by the event stream, seen in ScriptedModel's cases) is in another function; and a symptom
that another key's divergence already explains is not counted. A step that threw is never
linked (:func:`conformance.judging.failure_groups.group_failures` keeps it out): what a case
shows after a throw may follow from it (a port whose ``end()`` needs an argument throws, and
its consumer then never finishes), so the throw stays a cause of its own.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import weakref
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import TypeVar

from conformance.judging.divergences import all_divergences
from conformance.judging.outcome import Divergence, Outcome
from conformance.model.cases import BrokenCase, Case

K = TypeVar("K", bound=Hashable)
Member = tuple[Case | BrokenCase, Outcome]

#: A step's keys that another of its keys decides: once the deciding key diverged, these say nothing new.
DECIDED_BY: Mapping[str, frozenset[str]] = {
    "value": frozenset({"state"}),
    "same_object_as": frozenset({"state", "value"}),
}
# ``steps[3].value.content`` -> (``steps[3]``, ``value``); ``result.messages[0]`` -> ("", ``result.messages``).
_WHERE = re.compile(r"^(?P<step>steps\[\d+\])\.(?P<key>\w+)|^(?P<top>\w+(?:\.\w+)?)")
# Per outcome, its case and its symptoms. Grouping runs several times per submission (each report
# channel, the featured cases), and walking every observation again each time was most of its cost
# (issue 37). Keyed by the outcome's identity, since an Outcome holds a dict and has no hash; the
# weak reference tells a reused identity apart and drops the entry when its outcome goes.
_SYMPTOMS: dict[int, tuple[weakref.ref[Outcome], Case | BrokenCase, tuple[Divergence, ...]]] = {}


def symptoms(case: Case | BrokenCase, outcome: Outcome) -> Iterator[Divergence]:
    """The case's symptoms (see the module's text): each a divergence of its own, in document order."""
    if not isinstance(case, Case) or outcome.observation is None or outcome.divergence is None:
        return
    seen: dict[str, set[str]] = {}
    for divergence in all_divergences(case, outcome.observation):
        where = _WHERE.match(divergence.path)
        if where is None:
            continue
        step, key = (where["step"], where["key"]) if where["step"] else ("", where["top"])
        diverged = seen.setdefault(step, set())
        if key not in diverged and not DECIDED_BY.get(key, frozenset()) & diverged:
            yield divergence
        diverged.add(key)


def recorded_symptoms(case: Case | BrokenCase, outcome: Outcome) -> tuple[Divergence, ...]:
    """:func:`symptoms`, walked once per outcome: an outcome is a record, so what it shows does not change."""
    key = id(outcome)
    entry = _SYMPTOMS.get(key)
    if entry is not None and entry[0]() is outcome and entry[1] is case:
        return entry[2]
    found = tuple(symptoms(case, outcome))

    def forget(reference: weakref.ref[Outcome]) -> None:
        if _SYMPTOMS.get(key, (None,))[0] is reference:  # not an entry a later outcome of this identity made
            _SYMPTOMS.pop(key, None)

    _SYMPTOMS[key] = (weakref.ref(outcome, forget), case, found)
    return found


def linked(groups: Mapping[K, Sequence[Member]], key_of: Callable[[Case | BrokenCase, Outcome], K]) -> dict[K, K]:
    """Each cause linked to another (see the module's text), mapped to the cause that names them: the largest (ties: first)."""
    operations = {key: {case.operation for case, _ in members if isinstance(case, Case)} for key, members in groups.items()}
    parent = {key: key for key in groups}

    def root(key: K) -> K:
        while parent[key] != key:
            key = parent[key]
        return key

    order = {key: index for index, key in enumerate(groups)}
    for keys in _widely_shown(groups, key_of).values():
        for first_key, second_key in itertools.combinations(keys, 2):
            if operations[first_key] & operations[second_key] and root(first_key) != root(second_key):
                first, second = sorted((root(first_key), root(second_key)), key=lambda found: (-len(groups[found]), order[found]))
                parent[second] = first
    return {key: root(key) for key in groups if root(key) != key}


def _widely_shown(groups: Mapping[K, Sequence[Member]], key_of: Callable[[Case | BrokenCase, Outcome], K]) -> dict[Hashable, list[K]]:
    """Per symptom, the causes at least half of whose cases show it (each cause's own first divergence included)."""
    # A symptom that is some member's first divergence reads as that member's cause.
    owner = {key_of(case, outcome): key for key, members in groups.items() for case, outcome in members}
    shown_by: dict[tuple[K, Hashable], set[str]] = {}
    for key, members in groups.items():
        for case, outcome in members:
            shown_by.setdefault((key, key), set()).add(case.id)
            for divergence in recorded_symptoms(case, outcome):
                found = key_of(case, dataclasses.replace(outcome, divergence=divergence))
                shown_by.setdefault((key, owner.get(found, found)), set()).add(case.id)
    by_symptom: dict[Hashable, list[K]] = {}
    for (key, symptom), cases in shown_by.items():
        if 2 * len(cases) >= len(groups[key]):
            by_symptom.setdefault(symptom, []).append(key)
    return by_symptom
