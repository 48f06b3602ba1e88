"""Shared helpers for the project's own tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.loading.loader import Suite, load_suite
from conformance.model.cases import Case
from conformance.model.profiles import PROFILES
from tests.support.graded_class import GradedClass, grade_class
from tests.support.js_variants import ensure_generated
from tests.support.paths import TEST_CACHE
from tests.support.requirements import require, skip_missing


def pytest_sessionstart(session: pytest.Session) -> None:
    """The broken JS course projects are generated from course-correct once per run: by the one
    process of a plain run, or by pytest-xdist's controller before its workers start (never by
    two workers at once, which would write the same files)."""
    if not hasattr(session.config, "workerinput"):
        stop_if_the_reference_fails_a_case()
        ensure_generated()


def stop_if_the_reference_fails_a_case(root: Path | None = None) -> None:
    """Stop the run at once, with one message, when a reference fails a bundled case.

    The reference (and examples/pi_ai_port for pi-ai-1) passes every bundled case, and many
    tests rely on it (grading totals, reports, batches). A wrong expectation would otherwise
    fail dozens of them, with the cause buried among them; here it is named, with the clause
    to check it against. About a second, once per run (by xdist's controller).
    """
    from conformance.adapters.kinds import resolve_adapter
    from conformance.authoring.suspect import reference_failures
    from conformance.model.clauses import load_profile_clauses
    from examples.pi_ai_port.conformance import ADAPTER

    found = reference_failures(load_suite(root), lambda: resolve_adapter("reference"), load_profile_clauses("course"), "the reference")
    pi_ai = load_suite(root, profile="pi-ai-1")
    found += reference_failures(
        pi_ai, lambda: ADAPTER, load_profile_clauses("pi-ai-1"), "examples/pi_ai_port (which passes every pi-ai-1 case)"
    )
    if found:
        listed = "\n\n".join(found)
        pytest.exit(
            f"a reference fails {len(found)} bundled case(s); every test that uses the suite would fail after it, "
            f"so the run stops here. Check the case(s) first:\n\n{listed}\n",
            returncode=1,
        )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one pytest-xdist worker more than the machine has cores.

    Many tests wait on the processes they start (handshakes, timeouts, a batch's workers, a
    browser); with a worker per core those waits leave a core idle. On two cores, three
    workers took 99-102 s where two took 105-108 s (paired runs).
    """
    return (os.cpu_count() or 1) + 1


def pytest_configure(config: pytest.Config) -> None:
    """Point the validation cache at :data:`tests.support.paths.TEST_CACHE`, for the whole run.

    Set before collection (some test modules load the fixtures when imported) and before
    pytest-xdist starts its workers, which inherit it, as do the processes the tests start:
    the fixtures are then validated at most once per run, not once per worker (the controller
    fills it before the workers start).
    """
    if not hasattr(config, "workerinput"):
        os.environ["PI_CONFORMANCE_CACHE"] = str(TEST_CACHE)
        if getattr(config.option, "numprocesses", None):
            # Fill it before the workers start: each would otherwise find it empty when its
            # collection loads the fixtures, and validate every file itself (about 3 s of CPU).
            for profile in PROFILES:
                load_suite(profile=profile)


@pytest.fixture(scope="session")
def suite() -> Suite:
    """The bundled fixtures, loaded once."""
    return load_suite()


@pytest.fixture(scope="session")
def cases_by_id(suite: Suite) -> dict[str, Case]:
    """Every loaded case by id."""
    return {case.id: case for case in suite.cases}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that reads the graded class runs in one pytest-xdist group (``--dist loadgroup``),
    so the class is graded once per run, not once per worker. The group runs first: it is the
    longest piece of work one worker must do alone, and started last it would leave the other
    cores idle at the end.

    A test marked ``needs_node``, ``needs_bwrap``, ``needs_chromium``... is skipped here, with the
    reason, on a machine without it (tests/support/requirements.py).
    """
    skip_missing(items)
    in_class = [item for item in items if "graded_class" in getattr(item, "fixturenames", ())]
    for item in in_class:
        item.add_marker(pytest.mark.xdist_group("graded-class"))
    chosen = set(in_class)
    items[:] = in_class + [item for item in items if item not in chosen]


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory: pytest.TempPathFactory) -> GradedClass:
    """The class of JavaScript submissions, graded once for every test that reads its results."""
    require("needs_node")
    return grade_class(tmp_path_factory.mktemp("class"))
