"""The clause registry: clause ids and their text, parsed from ``spec/spec.md``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conformance.model.paths import data_root, spec_file
from conformance.model.profiles import get_profile

# A clause is a paragraph that starts with its id in bold: **IR-TEXT-1** ...
_CLAUSE_START = re.compile(r"^\*\*(?P<id>[A-Z]+(?:-[A-Z]+)*-\d+)\*\*\s*(?P<text>.*)$")
# A clause whose behaviour a later chapter's code changes says so: *superseded at chapter 09*.
_SUPERSEDED = re.compile(r"\*superseded at chapter (?P<chapter>\d\d)\*")
# A clause of chapters 05-09 names the course's lab it belongs to: (Lab 9.3; from chapter 09; ...).
_OWN_LAB = re.compile(r"\(Lab (?P<lab>\d+\.\d+);")


@dataclass(frozen=True)
class Clause:
    """One numbered, normative clause of the spec."""

    id: str
    text: str
    line: int

    @property
    def superseded_at(self) -> str | None:
        """The chapter whose code changes this clause's behaviour ("09"), or None: a repository there is not held to it."""
        match = _SUPERSEDED.search(self.text)
        return match["chapter"] if match else None

    @property
    def lab(self) -> str | None:
        """The course's lab the clause belongs to ("9.3"), when its text names one; None otherwise."""
        match = _OWN_LAB.search(self.text)
        return match["lab"] if match else None


def parse_clauses(text: str) -> dict[str, Clause]:
    """Parse every clause paragraph of a spec document, keyed by id."""
    clauses: dict[str, Clause] = {}
    current_id: str | None = None
    current_lines: list[str] = []
    current_line = 0

    def flush() -> None:
        if current_id is not None:
            clauses[current_id] = Clause(current_id, " ".join(current_lines).strip(), current_line)

    for number, line in enumerate(text.splitlines(), start=1):
        match = _CLAUSE_START.match(line)
        if match:
            flush()
            current_id, current_lines, current_line = match["id"], [match["text"]], number
        elif current_id is not None and line.strip() and not line.startswith("#"):
            current_lines.append(line.strip())
        else:
            flush()
            current_id, current_lines = None, []
    flush()
    return clauses


def load_clauses(path: Path | None = None) -> dict[str, Clause]:
    """Load the clause registry from the spec document."""
    return parse_clauses((path or spec_file()).read_text(encoding="utf-8"))


def load_profile_clauses(profile: str) -> dict[str, Clause]:
    """The clause registry of a profile: ``spec/spec.md`` for ``course``, ``spec/pi-ai-1/spec.md`` for ``pi-ai-1``."""
    return load_clauses(data_root() / get_profile(profile).spec)


@cache
def clause_labs(profile: str) -> dict[str, str]:
    """Per clause id of the profile's spec, the lab it names as its own (clauses naming none are left out)."""
    return {clause.id: clause.lab for clause in load_profile_clauses(profile).values() if clause.lab is not None}
