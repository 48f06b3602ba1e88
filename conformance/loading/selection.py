"""Checking a selection (``--lab``, ``--chapter``, ``--clause``) of a profile before anything runs.

A value that names no lab, chapter or clause is a usage error that lists the valid ones: a
typo must not look like "no case matches".
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from conformance.model.cases import LABS
from conformance.model.profiles import DEFAULT_PROFILE, PROFILES, get_profile

CHAPTERS = ("03", "04", "05", "06", "07", "09")


def selection_problems(
    labs: Iterable[str], chapters: Iterable[str], clauses: Iterable[str], known_clauses: Iterable[str], profile: str = DEFAULT_PROFILE
) -> list[str]:
    """One message per unknown value, each listing the valid ones (for ``profile``: its groups, chapters and clauses).

    The course groups its cases in labs and chapters; another profile groups them in areas
    (``--lab AREA`` selects one) and has no chapters.
    """
    known = list(known_clauses)
    current = get_profile(profile)
    if profile == DEFAULT_PROFILE:
        problems = [f"--lab {lab}: no such lab; valid labs: {', '.join(LABS)}" for lab in labs if lab not in LABS]
        problems += [
            f"--chapter {chapter}: no such chapter; valid chapters: {', '.join(CHAPTERS)}"
            for chapter in chapters
            if chapter not in CHAPTERS
        ]
    else:
        areas = ", ".join(current.features)
        problems = [
            f"--lab {lab}: profile {profile} has no such {current.group_label}; valid {current.group_label}s: {areas}"
            for lab in labs
            if lab not in current.features
        ]
        problems += [f"--chapter {chapter}: profile {profile} has no chapters (its cases are grouped in {areas})" for chapter in chapters]
    for clause in clauses:
        if clause in known:
            continue
        # A shared case cites both profiles' clauses; a run sees only its own profile's.
        other = next(
            (candidate for candidate in PROFILES.values() if candidate.name != profile and clause.startswith(candidate.clause_prefixes)),
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
        problems.append(f"--clause {clause}: no such clause in {current.spec}; {listing}")
    return problems
