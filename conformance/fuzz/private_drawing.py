"""How a private set's programs become its cases: which draws are taken, and what became of the others.

:func:`conformance.fuzz.private.generate` runs short Hypothesis searches whose condition is
:meth:`Drawing.holds`: a program is taken when its lab's share (and its kind's, for the
operations that tell kinds apart) is not full, its inputs are new and unpredictable, the rubric
weighs it, and the reference gives the same observation twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.adapters.interface import Adapter
from conformance.fuzz.engine import reference_case
from conformance.fuzz.expect import lab_for
from conformance.fuzz.operations import facet_of
from conformance.fuzz.private_cases import private_case
from conformance.fuzz.strategies import Program
from conformance.grading.rubric import Rubric
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from conformance.yamlio.canonical import inputs_key

#: Cases one search takes, and programs it draws, before the next search starts from a fresh seed.
CASES_PER_SEARCH = 2
DRAWS_PER_SEARCH = 60


@dataclass
class Stats:
    """What became of the programs drawn."""

    drawn: int = 0
    #: Programs of an operation whose share of its lab is full (or the share of their kind of program,
    #: :attr:`~conformance.fuzz.operations.Drawable.facets`), or of a lab the rubric does not grade.
    surplus: int = 0
    #: Same operation, input and steps as a public case, a case already in the folder, or an earlier draw.
    duplicates: int = 0
    #: Programs the public probe seeds draw too (:func:`conformance.fuzz.private.predictable_inputs`).
    predictable: int = 0
    #: Cases the rubric would weigh 0 (chapter 02's generic stream, in the default rubric).
    weightless: int = 0
    #: The reference could not run the program, or failed its own expectations on the second run.
    unstable: int = 0
    seconds: float = 0.0


@dataclass
class PrivateSet:
    """The generated cases, by lab in the rubric's order, and how drawing them went."""

    cases: dict[str, list[Case]]
    stats: Stats = field(default_factory=Stats)

    @property
    def all_cases(self) -> list[Case]:
        """Every case, lab by lab."""
        return [case for lab_cases in self.cases.values() for case in lab_cases]


@dataclass
class Drawing:
    """Hypothesis's condition while a private set is drawn: which programs become cases, and when to stop."""

    reference: Adapter
    rubric: Rubric
    timeout_s: float | None
    #: Cases wanted per (lab, operation), and how many there are.
    wanted: dict[tuple[str, str], int]
    result: PrivateSet
    #: Inputs of the taken cases and of the cases drawn so far, and those the public probe seeds draw.
    seen_inputs: set[str]
    predictable: frozenset[str]
    seen_ids: set[str]
    max_draws: int
    have: dict[tuple[str, str], int] = field(init=False)
    #: Cases taken per (lab, operation, kind of program), for the operations that tell kinds apart.
    have_facets: dict[tuple[str, str, str], int] = field(init=False, default_factory=dict)

    #: Cases taken and programs drawn by the current search (:data:`CASES_PER_SEARCH`, :data:`DRAWS_PER_SEARCH`).
    search_cases: int = field(init=False, default=0)
    search_draws: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.have = dict.fromkeys(self.wanted, 0)

    def open_slots(self) -> frozenset[tuple[str, str]]:
        """The ``(lab, operation)`` slots not yet full."""
        return frozenset(slot for slot, count in self.wanted.items() if self.have[slot] < count)

    def start_search(self) -> None:
        """A new search begins: its own count of cases and draws."""
        self.search_cases = 0
        self.search_draws = 0

    def full(self) -> bool:
        return all(self.have[slot] >= count for slot, count in self.wanted.items())

    def holds(self, program: Program) -> bool:
        """Take ``program`` as a case when it is new, weighed and stable; True ends the search (set complete, or hopeless)."""
        stats = self.result.stats
        if self.full() or stats.drawn >= self.max_draws or self.search_cases >= CASES_PER_SEARCH or self.search_draws >= DRAWS_PER_SEARCH:
            return True
        stats.drawn += 1
        self.search_draws += 1
        lab = lab_for(program)
        slot = (lab, program.operation)
        key = self._fresh_inputs(program, slot)
        if key is None:
            return False
        case = self._checked_case(program, lab)
        if case is None:
            return False
        self.seen_inputs.add(key)
        self.seen_ids.add(case.id)
        facet = facet_of(program, lab)
        if facet is not None:
            self.have_facets[(*slot, facet[0])] = self.have_facets.get((*slot, facet[0]), 0) + 1
        self.result.cases[lab].append(case)
        self.have[slot] += 1
        self.search_cases += 1
        return self.full() or self.search_cases >= CASES_PER_SEARCH

    def _fresh_inputs(self, program: Program, slot: tuple[str, str]) -> str | None:
        """The program's inputs key, unless its slot is full or its inputs were seen or are predictable."""
        stats = self.result.stats
        if self.have.get(slot, 0) >= self.wanted.get(slot, 0) or self._facet_full(program, slot):
            stats.surplus += 1
            return None
        key = inputs_key(program.operation, program.input, tuple(program.steps))
        if key in self.seen_inputs:
            stats.duplicates += 1
            return None
        if key in self.predictable:
            stats.predictable += 1
            return None
        return key

    def _facet_full(self, program: Program, slot: tuple[str, str]) -> bool:
        """Whether the slot holds more cases of the program's kind than of another kind (round robin over the kinds)."""
        facet = facet_of(program, slot[0])
        if facet is None:
            return False
        kind, kinds = facet
        return self.have_facets.get((*slot, kind), 0) > min(self.have_facets.get((*slot, other), 0) for other in kinds)

    def _checked_case(self, program: Program, lab: str) -> Case | None:
        """The program as a private case, when the reference runs it twice alike and the rubric weighs it."""
        stats = self.result.stats
        case = reference_case(self.reference, program)
        if case is None:
            stats.unstable += 1
            return None
        case = private_case(program, case)
        if self.rubric.labs[lab].case_weight(case) <= 0:
            stats.weightless += 1
            return None
        if case.id in self.seen_ids:  # 32 bits of the inputs' hash alike, the inputs not: as good as never
            stats.duplicates += 1
            return None
        # The second run: a value that differs between runs would make the case flaky.
        if run_alone(self.reference, case, self.timeout_s).status != "passed":
            stats.unstable += 1
            return None
        return case
