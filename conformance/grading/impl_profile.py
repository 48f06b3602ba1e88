"""Which implementations go with which profile when grading, and the defaults per profile.

``reference`` and ``pi-course:`` (a student's course project) implement the course only,
``pi-ai:`` (an installed ``@earendil-works/pi-ai``) implements ``pi-ai-1`` only; ``cmd:`` and
``python:`` may implement either (they say which in their handshake). Grading one of the
former against the other profile would fail every case with "profile mismatch": it is
refused up front, as a usage error that says what to give instead.
"""

from __future__ import annotations

from typing import Final

from conformance.profiles import DEFAULT_PROFILE

#: Implementation kinds (the part of ``--impl`` before ``:``) tied to one profile.
PROFILE_OF_KIND: Final = {"reference": DEFAULT_PROFILE, "pi-course": DEFAULT_PROFILE, "pi-ai": "pi-ai-1"}
#: ``grade --impl`` without a value: the course's bundled reference; other profiles have none.
DEFAULT_IMPL: Final = {DEFAULT_PROFILE: "reference"}
#: ``grade-batch --impl-template`` without a value: what a submission folder is, per profile.
DEFAULT_TEMPLATE: Final = {DEFAULT_PROFILE: "pi-course:{path}", "pi-ai-1": "pi-ai:{path}"}

_EITHER = "cmd:'COMMAND LINE' or python:MODULE[:ATTR]"


def profile_problem(impl: str, profile: str, option: str = "--impl") -> str | None:
    """Why ``impl`` cannot be graded against ``profile``, or None."""
    kind = impl.partition(":")[0]
    owner = PROFILE_OF_KIND.get(kind)
    if owner is None or owner == profile:
        return None
    fits = [f"{name}:" if name != "reference" else name for name, of in PROFILE_OF_KIND.items() if of == profile]
    instead = f"{' or '.join(fits)}, {_EITHER}" if fits else _EITHER
    return (
        f"{option} {impl}: a {kind} implementation is profile {owner}, but grading is for --profile {profile}; "
        f"grade it with --profile {owner}, or give {option} as {instead}"
    )
