"""The in-memory form of a fixture case."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from conformance.common.jsontypes import JsonObject
from conformance.model.profiles import ALL_SCENARIO_OPERATIONS, COURSE, DEFAULT_PROFILE

# The course profile's operations (conformance/model/profiles.py lists them once).
SCENARIO_OPERATIONS: Final = COURSE.scenario_operations
PURE_OPERATIONS: Final = COURSE.operations - SCENARIO_OPERATIONS
OPERATIONS: Final = PURE_OPERATIONS | SCENARIO_OPERATIONS
LABS: Final = (
    "3.1",
    "3.2",
    "4.1",
    "4.2",
    "5.1",
    "5.2",
    "5.3",
    "6.1",
    "6.2",
    "6.3",
    "7.1",
    "7.2",
    "7.3",
    "7.4",
    "7.5",
    "9.1",
    "9.2",
    "9.3",
    "9.4",
    "9.5",
)
#: A case's timeout when neither its ``timeout_s`` nor ``--timeout`` says otherwise: the one default.
DEFAULT_TIMEOUT_S: Final = 1.0


@dataclass(frozen=True)
class Case:
    """One fixture case, validated, with where it came from."""

    id: str
    file: str
    line: int
    chapter: str
    lab: str
    clauses: tuple[str, ...]
    description: str
    operation: str
    input: JsonObject
    expect: JsonObject | None = None
    steps: tuple[JsonObject, ...] = ()
    hint: tuple[str, ...] = ()
    timeout_s: float | None = None
    # Course profile: behaviours beyond the chapter text the case depends on (spec/features.yaml);
    # another profile: the areas it belongs to.
    features: tuple[str, ...] = ()
    # Line of each step in the fixture file, for feedback that points at the step.
    step_lines: tuple[int, ...] = field(default=(), compare=False)
    # The profile of the case's file (conformance/model/profiles.py).
    profile: str = DEFAULT_PROFILE

    def timeout_with(self, option_s: float | None) -> float:
        """The case's timeout under ``--timeout`` ``option_s`` (None: not given): the larger of the two.

        ``timeout_s`` is a floor (spec/fixture-format.md, Timeouts): a case known to be slow
        is never judged by a shorter ``--timeout``, which lengthens every other case.
        """
        return max(self.timeout_s or 0.0, option_s or DEFAULT_TIMEOUT_S)

    @property
    def is_scenario(self) -> bool:
        """True for operations written as steps (in any profile)."""
        return self.operation in SCENARIO_OPERATIONS or self.operation in ALL_SCENARIO_OPERATIONS

    @property
    def location(self) -> str:
        """``file:line`` of the case in its fixture file."""
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class BrokenCase:
    """A fixture entry that could not be loaded; it is reported, never dropped."""

    id: str
    file: str
    line: int
    problems: tuple[str, ...]
    lab: str | None = None
    chapter: str | None = None
    profile: str = DEFAULT_PROFILE
    #: The line of each problem (the key or value it is about), in the order of ``problems``;
    #: empty when only the entry's line is known.
    problem_lines: tuple[int, ...] = ()

    @property
    def location(self) -> str:
        """``file:line`` of the entry."""
        return f"{self.file}:{self.line}"

    def located_problems(self) -> list[tuple[int, str]]:
        """Each problem with its own line (the entry's line when it has none)."""
        lines = self.problem_lines if len(self.problem_lines) == len(self.problems) else (self.line,) * len(self.problems)
        return list(zip(lines, self.problems, strict=True))
