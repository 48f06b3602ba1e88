"""Charge each bug once, in the lab that owns it, and only on evidence that the later lab works.

Later labs build on earlier ones: a ScriptedModel (lab 4.1) plays its turns through the
student's AssistantMessageEventStream (lab 3.2), so a lab 3.2 bug such as "``result()``
resolves with a copy" also fails dozens of lab 4 cases. Scoring those again would make a
bug's cost follow how many fixtures happen to touch it. But a failure is also what junk
code produces, and a student controls both labs: excusing must not let a cheap or free
earlier failure buy a later lab's points. The rules, applied lab by lab in the rubric's order:

1. **Fine symptoms.** Every divergence of a failed case is reduced to a *symptom*: the
   scenario step's action (or the operation) and the exact observation path down to the first
   differing key. Event and request lists keep the item's index and, for events, its expected
   type: ``consume: events[1](text_delta).partial.content``, ``requests: requests[0].messages``,
   ``result: same_object_as``. A list of the wrong length says its length, whether that is too
   few or too many, and the first item that differs:
   ``consume: events has 0 items, fewer than expected (first difference: events[0](start))``.
   *Every* divergence counts, so a case that also breaks something of its own lab is charged.
2. **Evidence of the same bug, that cost points.** A failed case of lab L is *inherited*
   when each of its symptoms also shows in a failed case of an earlier lab that was charged
   there, *weighs more than 0* in the rubric (a failure that cost nothing excuses nothing)
   and *cites a clause the case cites too*. Only the clauses a case lists count: no family of
   clauses is read as restating another ("a ScriptedModel builds on the lab 3.2 stream"),
   since that let any earlier failure with a matching symptom excuse any later case.
3. **Proportion** (applied by :mod:`conformance.grading.excusing`). An inherited case earns
   its points scaled by the pass rate of its lab's *own* cases (those not inherited), by
   weight. A one-bug submission passes the rest of the later lab and loses nothing twice; a
   lab whose own cases all fail, or that has none, earns nothing from attribution. This is
   also the rule for labs that share a module (4.1 and 4.2 both test ``scripted-model.ts``):
   a junk ScriptedModel fails lab 4.1 and excuses lab 4.2's failures, which then earn 0,
   because none of lab 4.2's own cases passes. (No refund cap: see :mod:`.excusing`.)
4. **Visible evidence for visible cases** (:mod:`conformance.grading.excusing`): a case
   students see is excused, and earns, from visible cases only, so nothing about the
   held-out cases shows in what they see before grades are published.

Another profile's groups work the same way in that profile's order: for ``pi-ai-1`` the
areas ``messages``, ``system-replay``, ``event-streams``, ``faux-provider`` (the faux
provider streams through the event streams), and feedback says "fails because of area ...".

5. **Inside a chapter, where it costs most** (:mod:`conformance.grading.symptom_homes`).
   Rule 2's "earlier lab" holds across chapters only. Labs of one chapter test one module, so
   a symptom (by its site, e.g. ``consume: events``) is charged in the chapter's lab where its
   failures cost most, and excuses the chapter's other labs' failures, earlier or later: one
   planted lab 4.1 failure cannot excuse lab 4.2's dearer real ones, and is itself excused
   when it shows nothing but their symptoms.
6. **Isolated labs** (``isolated``): when a lab's cases run over a reference of the earlier
   chapters' modules (lab isolation, :mod:`conformance.adapters.lab_isolation`), those labs are
   no evidence for it; rules 2-4 stand in for isolation where an implementation cannot have it.

7. **A clause of another lab** (:mod:`conformance.grading.clause_owners`). Inside a chapter,
   a failure left charged that cites a clause the spec puts in an earlier lab of the chapter is
   excused by that lab's charged failures citing the clause, for at most what they cost:
   the course's own tests cross labs (its Lab 9.5 test needs lab 9.4's abort check), and a
   bug shows there through observations of its own, which rules 2 and 5 cannot match.

A case that timed out, threw or errored has no divergence and is always charged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from conformance.common.jsontypes import JsonValue
from conformance.common.value_paths import join_index
from conformance.grading.clause_owners import owned_elsewhere
from conformance.grading.inherited import Inherited
from conformance.grading.symptom_homes import chapter_of, site, symptom_homes
from conformance.judging.matcher import MISSING, first_divergence, literal_key
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case

#: Observation keys whose items are compared item by item, one symptom per item key.
_LISTS = frozenset({"events", "requests"})


def symptoms(case: Case, observation: Mapping[str, JsonValue] | None) -> frozenset[str]:
    """The symptoms of every divergence between the case's expectations and ``observation``."""
    if observation is None:
        return frozenset()
    found: set[str] = set()
    if not case.is_scenario:
        for key, expected in (case.expect or {}).items():
            divergence = first_divergence(expected, observation.get(key, MISSING), key)
            if divergence is not None:
                found.add(f"{case.operation}: {divergence.path}")
        return frozenset(found)
    observed_steps = observation.get("steps")
    if not isinstance(observed_steps, list) or len(observed_steps) != len(case.steps):
        return frozenset({f"{case.operation}: steps"})
    for step, observed in zip(case.steps, observed_steps, strict=True):
        expected_step = step.get("expect")
        if not isinstance(expected_step, dict):
            continue
        action = str(step.get("action"))
        observed_object = observed if isinstance(observed, dict) else {}
        for key, expected in expected_step.items():
            found.update(f"{action}: {name}" for name in _key_symptoms(key, expected, observed_object.get(key, MISSING)))
    return frozenset(found)


def _item_label(key: str, index: int, item: JsonValue) -> str:
    """``events[2](done)``: an item's index and, for an event, its expected type."""
    label = join_index(key, index)
    kind = item.get("type") if isinstance(item, dict) else None
    return f"{label}({kind})" if isinstance(kind, str) else label


def _key_symptoms(key: str, expected: JsonValue, actual: object) -> set[str]:
    """The symptoms of one observation key (item by item for an event or request list)."""
    divergence = first_divergence(expected, actual, key)  # type: ignore[arg-type]
    if divergence is None:
        return set()
    expected = _closest_alternative(expected, actual)
    if key not in _LISTS or not isinstance(expected, list) or not isinstance(actual, list):
        return {divergence.path}
    if len(expected) != len(actual):
        first = next(
            (index for index, pair in enumerate(zip(expected, actual, strict=False)) if first_divergence(*pair) is not None),
            min(len(expected), len(actual)),
        )
        where = _item_label(key, first, expected[first]) if first < len(expected) else join_index(key, first)
        # The actual length and the first item that differs, not the expected length: a
        # stream that delivers nothing fails a 3-event and an 8-event case alike.
        amount = "fewer" if len(actual) < len(expected) else "more"
        return {f"{key} has {len(actual)} items, {amount} than expected (first difference: {where})"}
    found: set[str] = set()
    for index, (expected_item, actual_item) in enumerate(zip(expected, actual, strict=True)):
        label = _item_label(key, index, expected_item)
        if not isinstance(expected_item, dict) or not isinstance(actual_item, dict):
            if first_divergence(expected_item, actual_item) is not None:
                found.add(label)
            continue
        expected_keys = {literal_key(item_key): value for item_key, value in expected_item.items()}
        for item_key, expected_value in expected_keys.items():
            item_divergence = first_divergence(expected_value, actual_item.get(item_key, MISSING), f"{label}.{item_key}")
            if item_divergence is not None:
                found.add(item_divergence.path)
        if any(item_key not in expected_keys for item_key in actual_item):
            found.add(label)
    return found


def _closest_alternative(expected: JsonValue, actual: object) -> JsonValue:
    """For ``{"$oneOf": [...]}`` of lists, the alternative to describe a list against: the first of its length, else the first."""
    alternatives = expected.get("$oneOf") if isinstance(expected, dict) and len(expected) == 1 else None
    if not isinstance(alternatives, list) or not alternatives or not all(isinstance(item, list) for item in alternatives):
        return expected
    same_length = [item for item in alternatives if isinstance(actual, list) and isinstance(item, list) and len(item) == len(actual)]
    return (same_length or alternatives)[0]


def _clauses(case: Case) -> frozenset[str]:
    """The clauses the case cites, and only those (rule 2)."""
    return frozenset(case.clauses)


def attribute(
    results: Iterable[tuple[Case, Outcome]],
    lab_order: Sequence[str],
    weight: Callable[[Case], float] | None = None,
    cost: Callable[[Case], float] | None = None,
    isolated: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, Inherited]:
    """The failed cases another lab's bug explains, by case id.

    ``lab_order`` lists the labs from first to last; cases of other labs are left alone.
    ``weight`` is a case's weight in the rubric (default 1 for every case): a failure that
    weighs 0 cost nothing, so it is evidence for nothing. ``cost`` is what a failure costs
    (default: its weight), to find a symptom's home inside a chapter (rule 5).
    ``isolated`` maps a lab to the earlier labs whose code its cases never run (lab isolation):
    those are no evidence for it.
    """
    weight_of = weight or (lambda _case: 1.0)
    apart = isolated or {}
    failures: dict[str, list[tuple[Case, Outcome, frozenset[str]]]] = {lab: [] for lab in lab_order}
    for case, outcome in results:
        if case.lab in failures and outcome.status == "failed" and outcome.divergence is not None:
            failures[case.lab].append((case, outcome, symptoms(case, outcome.observation)))
    inherited: dict[str, Inherited] = {}
    # Rule 2 across chapters, lab by lab: each symptom of an earlier lab's charged, weighted failures.
    charged: list[tuple[str, dict[str, list[tuple[Case, Outcome]]]]] = []
    for lab in lab_order:
        shown: dict[str, list[tuple[Case, Outcome]]] = {}
        earlier = [(other, seen) for other, seen in charged if chapter_of(other) != chapter_of(lab) and other not in apart.get(lab, ())]
        for case, outcome, found in failures[lab]:
            explanation = _explain(case, found, earlier) if found else None
            if explanation is not None:
                inherited[case.id] = explanation
            elif weight_of(case) > 0:
                for symptom in sorted(found):
                    shown.setdefault(symptom, []).append((case, outcome))
        charged.append((lab, shown))
    inherited.update(_within_chapters(failures, charged, inherited, lab_order, cost or weight_of, apart))
    left = [failure for lab in lab_order for failure in failures[lab] if failure[0].id not in inherited]
    inherited.update(owned_elsewhere(left, lab_order, weight_of, cost or weight_of, apart))
    return inherited


def _within_chapters(
    failures: Mapping[str, Sequence[tuple[Case, Outcome, frozenset[str]]]],
    charged: Sequence[tuple[str, Mapping[str, Sequence[tuple[Case, Outcome]]]]],
    inherited: Mapping[str, Inherited],
    lab_order: Sequence[str],
    cost: Callable[[Case], float],
    apart: Mapping[str, frozenset[str]],
) -> dict[str, Inherited]:
    """Rule 5: the charged failures a symptom's home lab in the same chapter explains (with any earlier chapter's evidence)."""
    left = [(case, outcome, found) for lab in lab_order for case, outcome, found in failures[lab] if case.id not in inherited]
    homes = symptom_homes(((case, found) for case, _, found in left), lab_order, cost)
    excused: dict[str, Inherited] = {}
    for case, _, found in left:
        if not found:
            continue
        chapter = chapter_of(case.lab)
        evidence = []
        for other, shown in charged:
            if chapter_of(other) != chapter:
                if other in apart.get(case.lab, ()) or lab_order.index(other) > lab_order.index(case.lab):
                    continue
                evidence.append((other, shown))
            elif other != case.lab:
                homed = {symptom: pairs for symptom, pairs in shown.items() if homes.get((chapter, site(symptom))) == other}
                evidence.append((other, homed))
        explanation = _explain(case, found, evidence)
        if explanation is not None:
            excused[case.id] = replace(explanation, earlier=lab_order.index(explanation.lab) < lab_order.index(case.lab))
    return excused


def _explain(
    case: Case, found: frozenset[str], charged: Sequence[tuple[str, Mapping[str, Sequence[tuple[Case, Outcome]]]]]
) -> Inherited | None:
    """The earliest lab whose charged failures show every symptom in ``found`` with a shared clause, if any.

    Symptoms may be spread over several earlier labs; the case then names the earliest one
    that shows any of them, with that lab's evidence.
    """
    clauses = _clauses(case)

    def evidence(shown: Mapping[str, Sequence[tuple[Case, Outcome]]], symptom: str) -> tuple[Case, Outcome] | None:
        return next((pair for pair in shown.get(symptom, ()) if clauses & _clauses(pair[0])), None)

    covered = {symptom for symptom in found for _, shown in charged if evidence(shown, symptom) is not None}
    if covered != found:
        return None
    for lab, shown in charged:
        first = next((pair for symptom in sorted(found) if (pair := evidence(shown, symptom)) is not None), None)
        if first is not None:
            return Inherited(lab, first[0], first[1], tuple(sorted(found)), case.lab)
    return None
