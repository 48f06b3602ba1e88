"""The private set's probe draws read once per test process from the tests' cache (:mod:`conformance.fuzz.probe_cache`).

The product keeps the probes in the user's cache folder; the tests point ``PI_CONFORMANCE_CACHE``
at ``paths.TEST_CACHE`` (tests/conftest.py), so every private set the tests draw, in any process,
shares one file per checkout, keyed by the drawing code's bytes. This module also installs the
answer in this process's ``private.predictable_inputs`` before forking (tests/support/cli_zygote.py):
each forked ``private-set`` then finds it in memory, not even reading the file.
"""

from __future__ import annotations

from pathlib import Path


def share_probe_draws(cache: Path) -> None:
    """Make this process's ``predictable_inputs`` answer from ``cache`` (drawing and storing there on a miss)."""
    from conformance.fuzz import private
    from conformance.fuzz.probe_cache import cached_draws

    if getattr(private.predictable_inputs, "shared_from", None) == cache:
        return
    found = cached_draws(private.draw_predictable_inputs, cache)

    def predictable_inputs() -> frozenset[str]:
        return found

    predictable_inputs.shared_from = cache  # type: ignore[attr-defined]
    private.predictable_inputs = predictable_inputs  # type: ignore[assignment]
