"""The one table of what the fuzzer can draw: each course operation's strategy and the labs its cases fall in.

The operations themselves come from the course profile (:data:`conformance.model.profiles.COURSE`):
every one of them is either here, in :data:`DRAWABLE`, or in :data:`NOT_DRAWABLE` with the
reason, and ``tests/fuzz/test_fuzz_operations.py`` fails when the profile gains an operation
that is in neither. ``pi-conformance fuzz`` and ``pi-conformance private-set`` both take their
mixes from here (:data:`FUZZ_OPERATIONS`, :func:`private_mix`), and the private set's lab of each
operation too (:func:`lab_operations`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from hypothesis import strategies as st

from conformance.fuzz.strategies import PURE_INPUTS, Program, event_stream_program, pure_program, scripted_model_program
from conformance.fuzz.strategies_agent import AGENT_FACETS, AGENT_LAB_STRATEGIES, run_agent_programs
from conformance.fuzz.strategies_loop import LAB_STRATEGIES, LIMIT_KINDS, SKIP_KINDS, run_agent_loop_programs
from conformance.fuzz.strategies_provider import provider_model_programs, to_provider_messages_program, to_provider_tools_program
from conformance.fuzz.strategies_reducer import EVENT_CLAUSES, IGNORED, reduce_agent_state_programs
from conformance.fuzz.strategies_sse import provider_fetch_programs
from conformance.fuzz.strategies_tools import execute_tool_call_programs, object_schema_program, tool_registry_program
from conformance.model.profiles import COURSE


@dataclass(frozen=True)
class Drawable:
    """How one operation's programs are drawn."""

    #: A new strategy object each call: ``one_of`` drops a repeated object, so weights need new ones.
    strategy: Callable[[], st.SearchStrategy[Program]]
    #: The labs its cases fall in (:func:`conformance.fuzz.expect.lab_for` decides which, per program).
    labs: tuple[str, ...]
    #: How many times the private set's mix holds the strategy: more for an operation whose lab has
    #: few operations, or whose draws are often left out (weighed 0, duplicates, surplus).
    private_weight: int = 1
    #: Whether ``pi-conformance fuzz`` draws it (chapters 03 and 04; see :data:`FUZZ_OPERATIONS`).
    fuzzed: bool = False
    #: Per lab, the tags that tell its kinds of program apart (a program's kind: the first of them it has).
    #: A private set then takes a kind's second case only once every kind has one (and so on), so
    #: that six cases of a lab are six kinds rather than what Hypothesis happened to cluster on.
    facets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Per lab, the strategy of that lab's programs alone (an operation of several labs that draws
    #: one branch per lab): a private set's search then draws only for its labs not yet full.
    lab_strategies: Mapping[str, Callable[[], st.SearchStrategy[Program]]] = field(default_factory=dict)


def _pure(operation: str) -> Callable[[], st.SearchStrategy[Program]]:
    return lambda: pure_program(operation)


#: The reducer's kinds of program: an ignored event (two ways), and each kind of event applied.
REDUCER_FACETS = (*(f"ignored:{why}" for why in IGNORED), *(f"event:{kind}" for kind in EVENT_CLAUSES))

#: The drawable operations, in the order the mixes list them (the order decides what a seed draws).
DRAWABLE: dict[str, Drawable] = {
    **{operation: Drawable(_pure(operation), ("3.1",), fuzzed=True) for operation in PURE_INPUTS},
    # Half the event-stream draws are chapter 02's generic stream, which the default rubric weighs 0;
    # one ScriptedModel draw in six is a plain lab-4.1 program, the rest have aborts, errors or exhaustion.
    "event_stream": Drawable(event_stream_program, ("3.2",), private_weight=3, fuzzed=True),
    "scripted_model": Drawable(scripted_model_program, ("4.1", "4.2"), private_weight=6, fuzzed=True),
    # Chapter 05: lab 5.1 shares its cases between its two operations, labs 5.2 and 5.3 have one each.
    "to_provider_messages": Drawable(to_provider_messages_program, ("5.1",), private_weight=3),
    "to_provider_tools": Drawable(to_provider_tools_program, ("5.1",), private_weight=2),
    "provider_model_stream": Drawable(provider_model_programs, ("5.2",)),
    "provider_fetch_stream": Drawable(provider_fetch_programs, ("5.3",)),
    # Chapter 06: one operation per lab, so each weighs as much as lab 3.1's seven operations together.
    "object_schema": Drawable(object_schema_program, ("6.1",), private_weight=4),
    "tool_registry": Drawable(tool_registry_program, ("6.2",), private_weight=4),
    "execute_tool_call": Drawable(execute_tool_call_programs, ("6.3",)),  # four branches, one per outcome
    # Chapter 07: one operation, five labs, a branch each (strategies_loop.py); chapter 09's reducer, one lab.
    "run_agent_loop": Drawable(
        run_agent_loop_programs,
        ("7.1", "7.2", "7.3", "7.4", "7.5"),
        private_weight=5,
        facets={"7.3": tuple(f"skip:{kind}" for kind in SKIP_KINDS), "7.5": tuple(f"limit:{kind}" for kind in LIMIT_KINDS)},
        lab_strategies=LAB_STRATEGIES,
    ),
    "reduce_agent_state": Drawable(
        reduce_agent_state_programs,
        ("9.1",),
        private_weight=4,
        facets={"9.1": (*(f"ignored:{why}" for why in IGNORED), *(f"event:{kind}" for kind in EVENT_CLAUSES))},
    ),
    # Chapter 09's Agent: one operation, four labs, a branch per lab and a kind of scenario per branch.
    "run_agent": Drawable(
        run_agent_programs,
        ("9.2", "9.3", "9.4", "9.5"),
        private_weight=4,
        facets=AGENT_FACETS,
        lab_strategies=AGENT_LAB_STRATEGIES,
    ),
}

#: Course operations without a strategy, and why: their cases are the public fixtures only.
#: None at present: an operation the profile gains goes here, with the reason, until it has a strategy.
NOT_DRAWABLE: dict[str, str] = {}

#: What ``pi-conformance fuzz`` draws: lab 3.1's operations once each, the two scenario operations twice.
FUZZ_OPERATIONS: tuple[str, ...] = tuple(operation for operation, drawable in DRAWABLE.items() if drawable.fuzzed)


def unregistered() -> set[str]:
    """Course operations in neither table (must be empty), and operations in a table that the profile lacks."""
    listed = set(DRAWABLE) | set(NOT_DRAWABLE)
    return (set(COURSE.operations) ^ listed) | (set(DRAWABLE) & set(NOT_DRAWABLE))


def lab_operations() -> dict[str, tuple[str, ...]]:
    """The operations each lab's cases are drawn for, in table order (:func:`.expect.lab_for` is the other way round)."""
    labs: dict[str, list[str]] = {}
    for operation, drawable in DRAWABLE.items():
        for lab in drawable.labs:
            labs.setdefault(lab, []).append(operation)
    return {lab: tuple(operations) for lab, operations in labs.items()}


def facet_of(program: Program, lab: str) -> tuple[str, tuple[str, ...]] | None:
    """``(kind, every kind of the lab)`` of ``program`` in ``lab`` (:attr:`Drawable.facets`), or None."""
    drawable = DRAWABLE.get(program.operation)
    facets = drawable.facets.get(lab, ()) if drawable is not None else ()
    return next(((facet, facets) for facet in facets if facet in program.tags), None)


def fuzz_mix() -> st.SearchStrategy[Program]:
    """The fuzzer's programs: each fuzzed operation listed once, the scenario ones twice (the same object)."""
    parts: list[st.SearchStrategy[Program]] = []
    for operation in FUZZ_OPERATIONS:
        strategy = DRAWABLE[operation].strategy()
        parts.extend([strategy] * (2 if operation in COURSE.scenario_operations else 1))
    return st.one_of(*parts)


def private_mix(slots: Collection[tuple[str, str]] | None = None) -> st.SearchStrategy[Program]:
    """The private set's programs: each drawable operation (with a slot in ``slots``, or all) ``private_weight`` times.

    ``slots`` are ``(lab, operation)`` pairs. An operation with :attr:`Drawable.lab_strategies`
    gives instead one strategy per lab of it in ``slots``, so that a search draws nothing for its
    labs already full. Distinct strategy objects, so that Hypothesis draws each share on its own.
    """
    parts: list[st.SearchStrategy[Program]] = []
    for operation, drawable in DRAWABLE.items():
        labs = [lab for lab in drawable.labs if slots is None or (lab, operation) in slots]
        if slots is not None and drawable.lab_strategies:
            parts.extend(drawable.lab_strategies[lab]() for lab in labs)
        elif labs:
            parts.extend(drawable.strategy() for _ in range(drawable.private_weight))
    return st.one_of(*parts)
