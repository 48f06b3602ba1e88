"""Output an implementation writes outside the protocol: counted, mentioned once, never charged.

A Node.js adapter routes the implementation's ``console.log`` (stdout) and ``console.error``
(stderr) away from the protocol's lines and counts them; each response carries the count
since the previous one (``stray_output``, spec/protocol.md). A stray ``console.log`` scores
what the code scores, but the student should hear of it: :meth:`StrayOutput.summary` is that
note.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.common.student_text import cap, scrub

#: How much of the first write a note quotes.
_QUOTED_CHARS = 120


@dataclass
class StrayOutput:
    """The writes counted over one adapter's life, and the start of the first one."""

    writes: int = 0
    first: str = ""

    def note(self, reported: object) -> None:
        """Add a response's ``stray_output`` (already checked against the protocol's schema; anything else is ignored)."""
        if not isinstance(reported, dict):
            return
        writes, first = reported.get("writes"), reported.get("first")
        if not isinstance(writes, int) or isinstance(writes, bool) or writes < 1 or not isinstance(first, str):
            return
        if self.writes == 0:
            self.first = cap(scrub(" ".join(first.split())), _QUOTED_CHARS)
        self.writes += writes

    def summary(self) -> str | None:
        """The note for the student, or None when the implementation wrote nothing outside the protocol."""
        if self.writes == 0:
            return None
        times = "once" if self.writes == 1 else f"{self.writes} times"
        return (
            f"Your code wrote to stdout or stderr {times} while the cases ran (the first: {self.first!r}). "
            "It costs no points, but it is usually a console.log left in: remove it before you hand in."
        )
