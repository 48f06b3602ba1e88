"""A private grading set: fresh programs drawn from a secret seed, expectations from the reference.

The public fixtures are in every student's hands, so an implementation can recognise their
inputs and replay recorded answers (a "lookup table") without any working code. A private set
is drawn with the fuzzer's strategies (:mod:`.strategies`) and the fuzzer's settings
(:data:`.engine.DRAW_SETTINGS`), so its inputs are new to the students; each program becomes
a case exactly as a fuzz finding does (:func:`.engine.reference_case`, :func:`.expect.build_case`:
implementation-defined values are matchers), and the reference must pass it again on a second
run or it is dropped as unstable. Nothing is shrunk: the small programs shrinking leads to are
the ones public fixtures and students' own tests already hold.

The same secret gives the same programs in any process, hence byte-identical files. The cases
are shared among the rubric's labs in proportion to their weights, and only cases the rubric
gives a weight above 0 are kept (the default rubric weighs chapter 02's generic stream at 0).
"""

from __future__ import annotations

import functools
import hashlib
import math
import time
from collections.abc import Iterable, Mapping
from random import Random

from hypothesis import Phase, find, settings
from hypothesis import strategies as st

from conformance.adapters.interface import Adapter
from conformance.common.user_cache import cache_folder
from conformance.fuzz.constants import without_local_constants
from conformance.fuzz.engine import DRAW_SETTINGS
from conformance.fuzz.operations import lab_operations, private_mix
from conformance.fuzz.private_drawing import DRAWS_PER_SEARCH, Drawing
from conformance.fuzz.private_drawing import PrivateSet as PrivateSet  # re-exported: the set a caller writes
from conformance.fuzz.private_drawing import Stats as Stats
from conformance.fuzz.probe_cache import cached_draws
from conformance.fuzz.strategies import Program
from conformance.grading.rubric import Rubric
from conformance.model.cases import Case
from conformance.yamlio.canonical import inputs_key

#: Draws allowed per wanted case before giving up on a lab that cannot be filled (a rubric whose
#: tags weigh all of a lab's drawable cases at 0, say); a full default set needs about 5 per case.
DRAWS_PER_CASE = 100


class PrivateSetError(ValueError):
    """A private set that cannot be generated or written as asked."""


def seed_number(secret: str) -> int:
    """The Hypothesis seed of a secret: a hash, so that any passphrase serves and none is stored."""
    digest = hashlib.sha256(("pi-conformance private-set\0" + secret).encode("utf-8")).digest()
    return int.from_bytes(digest[:16], "big")


def quotas(rubric: Rubric, total: int) -> dict[str, int]:
    """Cases per lab, in proportion to the rubric's lab weights (largest remainders), at least one each.

    Only the labs the fuzzer draws programs for (:data:`LAB_OPERATIONS`, from the one table
    :mod:`conformance.fuzz.operations`); a lab of operations it has no strategy for holds no case.
    """
    labs = [lab for lab in rubric.labs if lab in LAB_OPERATIONS]
    if total < len(labs):
        raise PrivateSetError(f"--cases {total}: the rubric grades {len(labs)} labs the generator covers, and each needs at least one case")
    weight = sum(rubric.labs[lab].weight for lab in labs)
    exact = {lab: total * rubric.labs[lab].weight / weight for lab in labs}
    counts = {lab: max(1, math.floor(share)) for lab, share in exact.items()}
    # Hand out what is left (or take back what the minimum of one added) by the largest remainders.
    by_remainder = sorted(labs, key=lambda lab: (-(exact[lab] - math.floor(exact[lab])), labs.index(lab)))
    index = 0
    while sum(counts.values()) != total:
        lab = by_remainder[index % len(labs)]
        if sum(counts.values()) < total:
            counts[lab] += 1
        elif counts[lab] > 1:
            counts[lab] -= 1
        index += 1
    return counts


# Generation only: the first program that ends a search is not to be shrunk.
_GENERATE_ONLY = settings(DRAW_SETTINGS, phases=[Phase.generate])

#: The operations each lab's cases are drawn for (:func:`.expect.lab_for` is the other way round).
LAB_OPERATIONS: dict[str, tuple[str, ...]] = lab_operations()


def operation_quotas(lab_quotas: Mapping[str, int]) -> dict[tuple[str, str], int]:
    """Each lab's cases shared equally among its operations, earlier operations first for the remainder.

    Hypothesis draws in clusters (it mutates what it drew before), so the first 25 lab-3.1
    programs may hold only three of its seven operations; a quota per operation covers them all.
    """
    counts: dict[tuple[str, str], int] = {}
    for lab, count in lab_quotas.items():
        operations = LAB_OPERATIONS[lab]
        share, extra = divmod(count, len(operations))
        for index, operation in enumerate(operations):
            if share + (index < extra):
                counts[(lab, operation)] = share + (index < extra)
    return counts


@functools.cache
def open_mix(slots: frozenset[tuple[str, str]]) -> st.SearchStrategy[Program]:
    """The private mix of the ``(lab, operation)`` slots (built once per set of them)."""
    return private_mix(slots)


# The fuzzer's strategies, mixed for a set whose labs weigh the same (the weights are in
# :data:`conformance.fuzz.operations.DRAWABLE`): about 850 draws fill the default set.
private_programs = private_mix()


#: Public seeds whose draws no private set uses. A program that Hypothesis draws for almost any
#: seed (an empty message, an empty script: the simplest value of each branch) is as good as
#: public, since anyone can run this generator; these probes find such programs.
PROBE_SEEDS = ("probe-1", "probe-2", "probe-3", "probe-4")
PROBE_DRAWS = 250
#: Programs each probe draws for each operation alone.
PROBE_FIRST_DRAWS = 10


@functools.cache
def predictable_inputs() -> frozenset[str]:
    """:func:`draw_predictable_inputs`, kept in the user's cache (:mod:`.probe_cache`): the same for every secret."""
    return cached_draws(draw_predictable_inputs, cache_folder("probes"))


def draw_predictable_inputs() -> frozenset[str]:
    """The inputs of every program drawn by the public probe seeds (about 1,000 draws in short searches, no reference runs)."""
    found: set[str] = set()

    drawn = limit = 0

    # Short searches, as :func:`generate` draws: what every search starts with is what to find.
    def collect(program: Program) -> bool:
        nonlocal drawn
        found.add(inputs_key(program.operation, program.input, tuple(program.steps)))
        drawn += 1
        return drawn >= limit

    def probe(programs: st.SearchStrategy[Program], random: Random, draws: int) -> None:
        nonlocal drawn, limit
        drawn, limit = 0, draws
        with without_local_constants():
            find(programs, collect, settings=_GENERATE_ONLY, random=random)

    for seed in PROBE_SEEDS:
        for search in range(PROBE_DRAWS // DRAWS_PER_SEARCH):
            probe(private_programs, Random(seed_number(seed) + search), DRAWS_PER_SEARCH)
        # A search over fewer slots starts with the simplest programs of the first of them.
        for lab, operations in LAB_OPERATIONS.items():
            for operation in operations:
                probe(open_mix(frozenset({(lab, operation)})), Random(seed_number(seed)), PROBE_FIRST_DRAWS)
    return frozenset(found)


def generate(
    reference: Adapter,
    rubric: Rubric,
    secret: str,
    total: int,
    taken: Iterable[Case] = (),
    timeout_s: float | None = None,
) -> PrivateSet:
    """Draw ``total`` cases for ``rubric``'s labs from ``secret``, none feeding the same inputs as a ``taken`` case."""
    started = time.perf_counter()
    lab_quotas = quotas(rubric, total)
    drawing = Drawing(
        reference,
        rubric,
        timeout_s,
        wanted=operation_quotas(lab_quotas),
        result=PrivateSet({lab: [] for lab in lab_quotas}),
        seen_inputs={inputs_key(case.operation, case.input, case.steps) for case in taken},
        predictable=predictable_inputs(),
        seen_ids={case.id for case in taken},
        max_draws=DRAWS_PER_CASE * total,
    )
    # Many short searches, each from its own seed: one long search mutates what it drew before,
    # so 20 cases of one operation would be near copies of each other. Each draws only for the
    # (lab, operation) slots whose share is not yet full (an operation of several labs with a
    # strategy per lab, for those labs alone): a set of some labs then draws the same cases
    # whatever the strategies of the others, and few draws go to labs already full.
    for search in range(DRAWS_PER_CASE * total):
        if drawing.full() or drawing.result.stats.drawn >= drawing.max_draws:
            break
        drawing.start_search()
        try:
            with without_local_constants():
                find(open_mix(drawing.open_slots()), drawing.holds, settings=_GENERATE_ONLY, random=Random(seed_number(secret) + search))
        except BaseException as error:
            if type(error).__name__ not in {"NoSuchExample", "Unsatisfiable"}:
                raise
    stats = drawing.result.stats
    stats.seconds = time.perf_counter() - started
    have = drawing.have
    short = [f"lab {slot[0]} {slot[1]}: {have[slot]} of {count}" for slot, count in drawing.wanted.items() if have[slot] < count]
    if short:
        detail = ", ".join(short)
        raise PrivateSetError(
            f"could not draw enough cases the rubric weighs above 0 in {stats.drawn} programs ({detail}); "
            "check the rubric's tags for these labs"
        )
    return drawing.result
