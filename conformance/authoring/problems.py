"""One problem found in a fixture file, printed as ``file:line: case-id: message``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """A problem at a line of a fixture file; ``case_id`` is ``-`` for file-level problems."""

    file: str
    line: int
    case_id: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.case_id}: {self.message}"
