"""Two submissions that differ only in the held-out phase (issue 32): what students see must not differ.

Both have one real lab 4.1 bug (``partials-shared-between-events``), whose symptoms excuse lab 4.2
cases: those visible cases earn lab 4.2's own pass rate, so on main that rate, counted over
held-out cases too, told a visible test how the held-out cases went. The grader runs the
held-out cases last, with a fresh adapter: ``saboteur`` answers junk from its second adapter
on (the held-out phase, when no visible case needed a retry), ``steady`` never does.

``--impl python:tests.support.held_out_probe:steady`` (or ``:saboteur``); call :func:`reset`
before grading with ``saboteur``.
"""

from __future__ import annotations

import itertools

from conformance.adapters.binding import BindingAdapter
from conformance.adapters.interface import Adapter
from conformance.common.jsontypes import JsonObject
from tests.support.variants import VARIANTS

_made = itertools.count()
_BUGGY = next(variant.binding for variant in VARIANTS if variant.name == "partials-shared-between-events")


class _Junk(Adapter):
    """Answers every operation with nothing useful."""

    name = "junk"

    def perform(self, operation: str, input: JsonObject, steps: list[JsonObject] | None = None) -> JsonObject:
        return {"steps": [{"threw": "junk"} for _ in steps or []]} if steps is not None else {"value": "junk"}


def reset() -> None:
    """Start counting adapters again (one graded submission)."""
    global _made
    _made = itertools.count()


def steady() -> Adapter:
    """The buggy code, the same in every phase."""
    return BindingAdapter(_BUGGY, "probe")


def saboteur() -> Adapter:
    """The same code for the first adapter (the visible phase), junk after it (the held-out phase)."""
    return steady() if next(_made) == 0 else _Junk()
