"""``fixtures check``: the rules that need the test code, said to fixture authors in their words.

One lab per bug: each one-bug variant of the test code (``tests/support/variants.py``: the
reference with one bug, and the case it must fail) is graded under a rubric of its own lab and
every later graded lab, and must lose points in its own lab only. A later lab's case that the
bug fails is fine when grading charges it to the bug's lab (the failure is *inherited*: a failed
case of that lab shows the same symptoms and shares a clause with it). When a new or changed
case makes a variant lose points in another lab, this check names the case, the bug, the lab
and the clauses that would let grading charge the bug where it belongs.

The variants are test code, so this runs in a checkout (``make test`` runs it first); the
checkout's root is put on ``sys.path`` to import them. spec/fixture-format.md states the rule.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.adapters.kinds.python import Python
from conformance.authoring.problems import Problem
from conformance.grading.grader import SubmissionResult, grade_submission, prepare
from conformance.grading.rubric import load_rubric, parse_rubric
from conformance.grading.scoring import GradedCase
from conformance.judging.bearing import clause_hits, divergence_words
from conformance.judging.failure_groups import cause_of
from conformance.model.clauses import load_clauses

#: Where the one-bug variants live, as ``MODULE:LIST``; each item has ``name`` and ``lab``, and
#: the module names each variant's binding ``name`` with ``_`` for ``-`` (its ``--impl python:`` form).
DEFAULT_VARIANTS = ("tests.support.variants:VARIANTS",)


@dataclass(frozen=True)
class BugVariant:
    """A one-bug implementation: its name, the lab its bug belongs to, and how to run it."""

    name: str
    lab: str
    impl: str


def load_variants(spec: str) -> list[BugVariant]:
    """The variants listed at ``MODULE:LIST`` (imported from the checkout's root)."""
    module_name, _, attribute = spec.partition(":")
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    module = importlib.import_module(module_name)
    listed: Sequence[Any] = getattr(module, attribute or "VARIANTS")
    prefix = Python().prefix
    return [BugVariant(item.name, item.lab, f"{prefix}{module_name}:{item.name.replace('-', '_')}") for item in listed]


def graded_labs() -> tuple[str, ...]:
    """The labs a grade gives points in (the default rubric's)."""
    return tuple(load_rubric().labs)


def graded_from_its_lab(variant: BugVariant, fixtures: Path | None = None) -> SubmissionResult:
    """``variant`` graded under a rubric of its own lab and every later graded lab."""
    labs = graded_labs()
    later = {lab: {"weight": 25} for lab in labs[labs.index(variant.lab) :]}
    context = prepare(parse_rubric({"version": 1, "name": f"from lab {variant.lab} on", "labs": later}, "fixtures check"), fixtures)
    return grade_submission(variant.impl, context, name=variant.name)


def misplaced(variant: BugVariant, result: SubmissionResult) -> list[Problem]:
    """A problem per case of ``result`` that costs ``variant`` points outside its own lab, in words an author can act on."""
    own = [graded for graded in result.score.cases if graded.case.lab == variant.lab and graded.outcome.status == "failed"]
    return [
        _problem(variant, graded, own)
        for graded in result.score.cases
        if graded.case.lab != variant.lab and graded.outcome.status == "failed" and graded.inherited is None
    ]


def _evidence_clauses(graded: GradedCase, own: list[GradedCase]) -> list[str]:
    """Clauses of the bug's own failing cases (those failing at the same place, if any) to cite: four at most."""
    place = cause_of(graded.case, graded.outcome).place
    alike = [other for other in own if cause_of(other.case, other.outcome).place == place] or own
    counts = Counter(clause for other in alike for clause in other.case.clauses)
    # The clause whose text names what diverged first (as feedback quotes it), then the most cited.
    words = divergence_words(graded.case, graded.outcome)
    registry = load_clauses()
    ranked = sorted(counts, key=lambda clause: (-clause_hits(registry.get(clause), words), -counts[clause]))
    return ranked[:4]


def misplaced_points(variant: BugVariant, fixtures: Path | None = None) -> list[Problem]:
    """The cases that cost ``variant`` points outside its own lab (none for a bug of a lab not graded yet)."""
    if variant.lab not in graded_labs():
        return []
    return misplaced(variant, graded_from_its_lab(variant, fixtures))


def _problem(variant: BugVariant, graded: GradedCase, own: list[GradedCase]) -> Problem:
    case = graded.case
    where = graded.outcome.divergence.path if graded.outcome.divergence is not None else graded.outcome.message
    own_clauses = {clause for other in own for clause in other.case.clauses}
    shared = [clause for clause in case.clauses if clause in own_clauses]
    suggested = ", ".join(_evidence_clauses(graded, own)) or "none: no case of its lab fails"
    why = (
        f"it shares {', '.join(shared)} with them, but none of them shows the same symptoms"
        if shared
        else "it cites none of the clauses they cite"
    )
    message = (
        f"moves points of the lab {variant.lab} bug {variant.name!r} (a one-bug variant of tests/support) into lab {case.lab}: "
        f"the bug fails this case at {where}, and grading cannot charge it to lab {variant.lab}, since of the lab {variant.lab} "
        f"cases the bug fails {why}. A bug is charged in its own lab only (spec/fixture-format.md, One lab per bug): cite the "
        f"lab {variant.lab} clause that decides this value (those failing the same way cite {suggested}), "
        f"or expect only what lab {case.lab}'s own clauses decide"
    )
    return Problem(case.file, case.line, case.id, message)


def check(specs: Sequence[str] = DEFAULT_VARIANTS, fixtures: Path | None = None) -> list[Problem]:
    """Every case that breaks the one-lab-per-bug rule for the variants at ``specs``, in file order."""
    problems = [problem for spec in specs for variant in load_variants(spec) for problem in misplaced_points(variant, fixtures)]
    return sorted(dict.fromkeys(problems), key=lambda problem: (problem.file, problem.line))
