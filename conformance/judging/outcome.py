"""What happened to one case, and where an observation first differs from its expectation.

The one model of a verdict that every stage after running shares: the engine and the pytest
front end produce :class:`Outcome` values, judging explains them, grading scores them and the
reports render them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from conformance.common.jsontypes import JsonObject


@dataclass(frozen=True)
class Divergence:
    """The first place where an observation differs from the expectation."""

    path: str
    expected: str
    actual: str
    note: str = ""
    #: What kind of difference: :data:`KINDS` (``missing``, ``unexpected``, ``type``, ``value``).
    kind: str = "value"
    #: For an unexpected key (reported at its parent), that key; else "".
    key: str = ""

    def __str__(self) -> str:
        where = self.path or "(root)"
        text = f"{where}: expected {self.expected} but got {self.actual}"
        return f"{text} ({self.note})" if self.note else text


Status = Literal["passed", "failed", "errored", "skipped"]


@dataclass(frozen=True)
class Outcome:
    """What happened to one case."""

    case_id: str
    status: Status
    message: str
    duration_s: float
    divergence: Divergence | None = None
    step_index: int | None = None
    observation: JsonObject | None = None
    #: The implementation hung: the case or its handshake timed out, or was given up after timeouts.
    timed_out: bool = False
    #: The case was not tried: the adapter gave up on its operation after repeated timeouts or exits.
    given_up: bool = False
    #: The operation can never finish: it was pending while the implementation's event loop was idle.
    hung: bool = False
