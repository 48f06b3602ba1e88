"""A private grading set drawn by ``conformance.fuzz.private`` for tests, with the reference and the shipped rubric."""

from __future__ import annotations

import logging
from pathlib import Path

from conformance.adapters.reference import create as create_reference
from conformance.fuzz import private, private_files
from conformance.grading.rubric import load_rubric
from conformance.loading.loader import load_suite
from tests.support.paths import TEST_CACHE
from tests.support.probe_cache import share_probe_draws


def write_private_set(seed: str, out: Path, total: int = 100) -> Path:
    """Draw ``total`` cases from ``seed`` for the default rubric and write them into ``out``; ``out``."""
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # drawn streams that never end, by design
    share_probe_draws(TEST_CACHE)
    reference = create_reference()
    try:
        generated = private.generate(reference, load_rubric(), seed, total, load_suite().cases)
    finally:
        reference.close()
    private_files.write(generated, out)
    return out
