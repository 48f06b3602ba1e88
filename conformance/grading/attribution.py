"""Charge each bug once, in the lab that owns it.

Later labs build on earlier ones: a ScriptedModel (lab 4.1) plays its turns through the
student's AssistantMessageEventStream (lab 3.2), so a lab 3.2 bug such as "``result()``
resolves with a copy" also fails dozens of lab 4 cases. Scoring those again would make a
bug's cost follow how many fixtures happen to touch it.

The rule, applied lab by lab in the rubric's order:

- Every divergence of a failed case is reduced to a *symptom*: the scenario step's action
  (or the operation) and the observation key that differs, with event and request indexes
  dropped and only the first key inside an event or request kept, e.g.
  ``result: same_object_as``, ``consume: events[].partial``, ``requests: requests[].messages``.
  *Every* divergence counts, not only the first, so a case that also breaks something of
  its own lab is still charged.
- A failed case of lab L is *inherited* when each of its symptoms also appears in a case
  that failed, and was charged, in an earlier lab. The student has already lost points for
  that behaviour there; the case earns its points in L and its feedback says "fails because
  of lab 3.2 (fix that first)".

Another profile's groups work the same way in that profile's order: for ``pi-ai-1`` the
areas ``messages``, ``system-replay``, ``event-streams``, ``faux-provider`` (the faux
provider streams through the event streams), and feedback says "fails because of area ...".

Evidence is required: a case is never excused because its symptom *could* come from an
earlier lab, only because the same submission demonstrably fails it there. A case that
timed out, threw or errored has no divergence and is always charged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from conformance.cases import Case
from conformance.execution import Outcome
from conformance.jsontypes import JsonValue
from conformance.matcher import MISSING, first_divergence
from conformance.profiles import get_profile

#: Observation keys whose items are compared item by item, one symptom per item key.
_LISTS = frozenset({"events", "requests"})


@dataclass(frozen=True)
class Inherited:
    """Why a failed case costs nothing in its own lab: an earlier lab's bug explains it."""

    #: The earliest lab whose charged failures show every symptom of the case.
    lab: str
    #: A failed case of that lab with the same symptoms, and its outcome (the one to fix first).
    evidence: Case
    evidence_outcome: Outcome
    #: The symptoms, e.g. ``("result: same_object_as",)``.
    symptoms: tuple[str, ...]

    @property
    def group_label(self) -> str:
        """What the evidence's profile calls its groups: ``lab`` (course) or ``area`` (pi-ai-1)."""
        return get_profile(self.evidence.profile).group_label

    def explanation(self, clause: str | None = None) -> str:
        """One line for the feedback: which lab (or area) to fix first (no case id: it may be held out)."""
        what = f"{clause}: " if clause else ""
        return f"fails because of {self.group_label} {self.lab} ({what}{'; '.join(self.symptoms)}); fix that first, it costs no points here"


def symptoms(case: Case, observation: Mapping[str, JsonValue] | None) -> frozenset[str]:
    """The symptoms of every divergence between the case's expectations and ``observation``."""
    if observation is None:
        return frozenset()
    found: set[str] = set()
    if not case.is_scenario:
        for key, expected in (case.expect or {}).items():
            if first_divergence(expected, observation.get(key, MISSING)) is not None:
                found.add(f"{case.operation}: {key}")
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


def _key_symptoms(key: str, expected: JsonValue, actual: object) -> set[str]:
    """The symptoms of one observation key (item keys of an event or request list)."""
    if first_divergence(expected, actual, key) is None:  # type: ignore[arg-type]
        return set()
    if key not in _LISTS or not isinstance(expected, list) or not isinstance(actual, list) or len(expected) != len(actual):
        return {key}
    found: set[str] = set()
    for expected_item, actual_item in zip(expected, actual, strict=True):
        if not isinstance(expected_item, dict) or not isinstance(actual_item, dict):
            if first_divergence(expected_item, actual_item) is not None:
                found.add(f"{key}[]")
            continue
        for item_key, expected_value in expected_item.items():
            if first_divergence(expected_value, actual_item.get(item_key, MISSING)) is not None:
                found.add(f"{key}[].{item_key}")
        if any(item_key not in expected_item for item_key in actual_item):
            found.add(f"{key}[]")
    return found


def attribute(results: Iterable[tuple[Case, Outcome]], lab_order: Sequence[str]) -> dict[str, Inherited]:
    """The failed cases an earlier lab's bug explains, by case id.

    ``lab_order`` lists the labs from first to last; cases of other labs are left alone.
    """
    by_lab: dict[str, list[tuple[Case, Outcome]]] = {lab: [] for lab in lab_order}
    for case, outcome in results:
        if case.lab in by_lab and outcome.status == "failed" and outcome.divergence is not None:
            by_lab[case.lab].append((case, outcome))
    inherited: dict[str, Inherited] = {}
    # Per earlier lab: each symptom of its charged failures, and the first case that shows it.
    charged: list[tuple[str, dict[str, tuple[Case, Outcome]]]] = []
    for lab in lab_order:
        shown: dict[str, tuple[Case, Outcome]] = {}
        for case, outcome in by_lab[lab]:
            found = symptoms(case, outcome.observation)
            explanation = _explain(found, charged) if found else None
            if explanation is not None:
                inherited[case.id] = explanation
                continue
            for symptom in sorted(found):
                shown.setdefault(symptom, (case, outcome))
        charged.append((lab, shown))
    return inherited


def _explain(found: frozenset[str], charged: Sequence[tuple[str, Mapping[str, tuple[Case, Outcome]]]]) -> Inherited | None:
    """The earliest lab whose charged failures show every symptom in ``found``, if any.

    Symptoms may be spread over several earlier labs; the case then names the earliest one
    that shows any of them, with that lab's evidence.
    """
    covered: set[str] = set()
    for _, shown in charged:
        covered.update(symptom for symptom in found if symptom in shown)
    if covered != found:
        return None
    for lab, shown in charged:
        evidence = next((shown[symptom] for symptom in sorted(found) if symptom in shown), None)
        if evidence is not None:
            return Inherited(lab, evidence[0], evidence[1], tuple(sorted(found)))
    return None
