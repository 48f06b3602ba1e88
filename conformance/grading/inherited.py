"""Why a failed case is excused: the lab (or area) whose bug explains it, with the evidence."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.model.profiles import get_profile


@dataclass(frozen=True)
class Inherited:
    """Why a failed case is charged in an earlier lab: that lab's bug explains it."""

    #: The earliest lab whose charged failures show every symptom of the case.
    lab: str
    #: A failed case of that lab with the same symptoms, and its outcome (the one to fix first).
    evidence: Case
    evidence_outcome: Outcome
    #: The symptoms, e.g. ``("result: same_object_as",)``.
    symptoms: tuple[str, ...]
    #: The lab of the excused case itself (whose own pass rate it earns).
    excused_lab: str = ""
    #: The share of its points the case earns here (rule 3), set when scoring.
    share: float = 1.0
    #: False when the evidence lab comes after the case's (rule 5: the site's home is a later lab of the chapter).
    earlier: bool = True

    @property
    def group_label(self) -> str:
        """What the evidence's profile calls its groups: ``lab`` (course) or ``area`` (pi-ai-1)."""
        return get_profile(self.evidence.profile).group_label

    def explanation(self, clause: str | None = None) -> str:
        """One line for the feedback: which lab (or area) to fix first (no case id: it may be held out)."""
        what = f"{clause}: " if clause else ""
        cost = (
            "it costs no points here"
            if self.share >= 1
            else f"here it earns {self.share:.0%} of its points, as its {self.group_label}'s own cases do (at most what the evidence cost)"
        )
        return f"fails because of {self.group_label} {self.lab} ({what}{'; '.join(self.symptoms)}); fix that first, {cost}"
