"""Within one chapter, charge a symptom to the lab where its failures cost most (attribution's rule 5).

Labs of one chapter test one module (lab 4.1 and 4.2 both test ``scripted-model.ts``), so a
bug there can show in both, and no isolation can tell which lab's code it is in. Excusing
"the later lab's failures because the earlier lab shows the same symptom" then lets a
student plant one cheap failure in the earlier lab (on the first call of a process, or for a
recognised public script) that excuses the later lab's real failures at the later lab's own
pass rate. So inside a chapter the direction is not "earlier first" but "where the symptom
costs most":

- a symptom's *site* is its step action and observation key (``consume: events`` for
  ``consume: events[0](start).partial.content``): one bug shows at one site with symptoms that
  vary from case to case (which event, which message), so where it costs most is decided per
  site, not per fine symptom, whose counts are a few cases each and tip by chance;
- each charged failure's full points are split evenly over its sites, so a case pays once
  however many it shows;
- a site's *home* in a chapter is the earliest lab whose share of the site's cost is at least
  that of all the chapter's other labs together; a site without such a lab has no home and is
  charged wherever it shows;
- a failure of another lab of the chapter may be excused by the home's failures only, and
  only as rule 2 says (each of its fine symptoms shown there, with a shared clause).

Why a plant buys nothing: what the home excuses elsewhere in the chapter is at most what the
symptom costs outside the home, which is at most what it costs in the home, which the home is
charged. A plant cheaper than the real failures leaves the home with the real failures, so it
excuses nothing, and is itself excused as part of that bug (the same code scores the same
with and without it). A plant dear enough to move the home costs at least what it excuses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from conformance.model.cases import Case

#: Costs are sums of float shares: a tie must read as a tie.
_TOLERANCE = 1e-9
#: Where an observation key ends in a symptom's path: an index, a dot, or the words of a length.
_KEY_END = re.compile(r"[\[. ]")


def chapter_of(lab: str) -> str:
    """The chapter a lab belongs to: ``4`` for ``4.2``; a group without a dot (a pi-ai-1 area) is its own."""
    return lab.split(".", 1)[0]


def site(symptom: str) -> str:
    """``consume: events`` for ``consume: events[0](start).partial.content`` (or ``consume: events has 0 items, ...``)."""
    action, _, path = symptom.partition(": ")
    return f"{action}: {_KEY_END.split(path, maxsplit=1)[0]}"


def symptom_homes(
    failures: Iterable[tuple[Case, frozenset[str]]], lab_order: Sequence[str], cost: Callable[[Case], float]
) -> dict[tuple[str, str], str]:
    """Per (chapter, site), the lab of the chapter that is its home (see the module's rules)."""
    costs: dict[tuple[str, str], dict[str, float]] = {}
    for case, found in failures:
        if not found:
            continue
        sites = {site(symptom) for symptom in found}
        share = cost(case) / len(sites)
        for where in sites:
            by_lab = costs.setdefault((chapter_of(case.lab), where), {})
            by_lab[case.lab] = by_lab.get(case.lab, 0.0) + share
    homes: dict[tuple[str, str], str] = {}
    for key, by_lab in costs.items():
        total = sum(by_lab.values())
        home = next((lab for lab in lab_order if by_lab.get(lab, 0.0) > 0 and by_lab[lab] >= total - by_lab[lab] - _TOLERANCE), None)
        if home is not None:
            homes[key] = home
    return homes
