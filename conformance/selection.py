"""Checking a selection (``--lab``, ``--chapter``, ``--clause``) before anything runs.

A value that names no lab, chapter or clause is a usage error that lists the valid ones: a
typo must not look like "no case matches".
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from conformance.cases import LABS
from conformance.profiles import DEFAULT_PROFILE, PROFILES

CHAPTERS = ("03", "04")


def selection_problems(labs: Iterable[str], chapters: Iterable[str], clauses: Iterable[str], known_clauses: Iterable[str]) -> list[str]:
    """One message per unknown value, each listing the valid ones."""
    known = list(known_clauses)
    problems = [f"--lab {lab}: no such lab; valid labs: {', '.join(LABS)}" for lab in labs if lab not in LABS]
    problems += [
        f"--chapter {chapter}: no such chapter; valid chapters: {', '.join(CHAPTERS)}" for chapter in chapters if chapter not in CHAPTERS
    ]
    for clause in clauses:
        if clause in known:
            continue
        # A shared case cites both profiles' clauses; a run sees only its own profile's.
        other = next(
            (profile for profile in PROFILES.values() if profile.name != DEFAULT_PROFILE and clause.startswith(profile.clause_prefixes)),
            None,
        )
        if other is not None:
            problems.append(f"--clause {clause}: a clause of profile {other.name} ({other.spec}); run with --profile {other.name}")
            continue
        close = difflib.get_close_matches(clause, known, n=3)
        family = clause.rsplit("-", 1)[0]
        same_family = [candidate for candidate in known if candidate.rsplit("-", 1)[0] == family]
        hint = close or same_family
        listing = (f"did you mean {', '.join(hint)}? " if hint else "") + "valid clauses: " + ", ".join(known)
        problems.append(f"--clause {clause}: no such clause in spec/spec.md; {listing}")
    return problems
