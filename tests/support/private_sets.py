"""A private grading set drawn by ``conformance.fuzz.private`` for tests, with the reference and the shipped rubric."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from conformance.adapters.reference import create as create_reference
from conformance.authoring.lint import lint
from conformance.fuzz import private, private_files
from conformance.grading.rubric import Rubric, load_rubric, parse_rubric
from conformance.loading.loader import load_suite
from conformance.model.cases import LABS, Case
from conformance.running.engine import run_alone
from tests.support.paths import TEST_CACHE
from tests.support.probe_cache import share_probe_draws


def write_private_set(seed: str, out: Path, total: int = 100) -> Path:
    """Draw ``total`` cases from ``seed`` for the default rubric and write them into ``out``; ``out``."""
    return _draw_and_write(load_rubric(), seed, total, out, load_suite().cases)


def write_labs_set(labs: Sequence[str], seed: str, per_lab: int, out: Path) -> Path:
    """Draw ``per_lab`` cases for each of ``labs`` (a rubric of those labs, weighed alike) and write them into ``out``; ``out``."""
    rubric = parse_rubric({"version": 1, "labs": {lab: {"weight": 1} for lab in labs}})
    return _draw_and_write(rubric, seed, per_lab * len(labs), out)


def _draw_and_write(rubric: Rubric, seed: str, total: int, out: Path, taken: Sequence[Case] = ()) -> Path:
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # drawn streams that never end, by design
    share_probe_draws(TEST_CACHE)  # the probes are the same for every set: drawn once per checkout
    reference = create_reference()
    try:
        generated = private.generate(reference, rubric, seed, total, taken)
    finally:
        reference.close()
    private_files.write(generated, out)
    return out


def loaded_cases(folder: Path) -> list[Case]:
    """The cases of a written set (which must load whole)."""
    suite = load_suite(folder)
    assert not suite.broken, suite.broken
    return suite.cases


def problems_besides_other_labs(folder: Path, labs: Sequence[str]) -> list[str]:
    """What ``fixtures lint`` (with the extra checks) says of a set of ``labs`` only, but that the other labs have no case."""
    others = [f"no case for lab {lab}:" for lab in LABS if lab not in labs]
    return [str(problem) for problem in lint(folder, extra=True) if not any(text in str(problem) for text in others)]


def reference_failures(cases: Sequence[Case]) -> list[tuple[str, str]]:
    """``(id, message)`` of each of ``cases`` the reference does not pass."""
    reference = create_reference()
    try:
        outcomes = [run_alone(reference, case) for case in cases]
    finally:
        reference.close()
    return [(outcome.case_id, outcome.message) for outcome in outcomes if outcome.status != "passed"]
