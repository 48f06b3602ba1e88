"""When the reference fails a case, the message says the case may be wrong and quotes the clause that decides the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters.kinds import parse_impl, resolve_adapter
from conformance.authoring.suspect import reference_failures
from conformance.loading.loader import load_suite
from conformance.model.clauses import load_clauses
from conformance.model.profiles import DEFAULT_PROFILE
from tests.conftest import stop_if_the_reference_fails_a_case
from tests.support.cli_runner import cli
from tests.support.fixture_scratch import scratch
from tests.support.suspect_cases import CASE, EXHAUSTION, SPEC_QUOTE, wrong_expectation


def test_the_note_names_the_clause_that_decides_the_value_and_quotes_it(tmp_path: Path) -> None:
    root = wrong_expectation(tmp_path)
    [found] = reference_failures(load_suite(root), lambda: resolve_adapter("reference"), load_clauses(), "the reference")
    assert found.startswith(f"{CASE} (fixtures/{EXHAUSTION}:")
    assert "the case itself may be wrong: check the expected value at steps[" in found
    # SM-EXHAUST-1 quotes the message exactly: it decides, though the case cites it last.
    assert "against SM-EXHAUST-1, the clause that decides it" in found
    assert "  SM-EXHAUST-1: When there is no turn for a call" in found and SPEC_QUOTE in found


def test_a_run_against_the_reference_says_to_check_the_case(tmp_path: Path) -> None:
    root = wrong_expectation(tmp_path)
    result = cli("run", "--fixtures", str(root), "-k", CASE, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "[check the case] the reference (reference) fails this case" in result.stdout
    assert "against SM-EXHAUST-1, the clause that decides it" in result.stdout
    # The group is labelled with the clause that decides the value, not another one the case cites.
    assert "[1] 1 case: SM-EXHAUST-1  " in result.stdout, result.stdout


def test_the_test_run_stops_at_once_with_that_message(tmp_path: Path) -> None:
    root = wrong_expectation(tmp_path)
    with pytest.raises(pytest.exit.Exception) as stopped:
        stop_if_the_reference_fails_a_case(root)
    assert "a reference fails 1 bundled case(s)" in str(stopped.value) and "SM-EXHAUST-1" in str(stopped.value)
    stop_if_the_reference_fails_a_case()  # the bundled suite: the reference passes every case


def test_only_the_profiles_reference_is_the_reference() -> None:
    assert parse_impl("reference").is_reference(DEFAULT_PROFILE)
    assert not parse_impl("cmd:./port").is_reference(DEFAULT_PROFILE) and not parse_impl("pi-course:.").is_reference(DEFAULT_PROFILE)
    assert not parse_impl("reference").is_reference("pi-ai-1")


def test_the_reference_check_runs_on_the_engine_so_a_given_up_case_is_retried_alone(tmp_path: Path) -> None:
    import reference_impl
    from conformance.adapters.binding import BindingAdapter
    from conformance.adapters.interface import GaveUp

    started: list[BindingAdapter] = []

    class GivesUpFirst(BindingAdapter):
        """The first adapter gives every operation up, as a process adapter does after timeouts; a fresh one answers."""

        def prepare(self, operation: str, lab: str) -> None:
            if self is started[0]:
                raise GaveUp(f"not run: {operation} timed out 3 times in a row")

    def fresh() -> BindingAdapter:
        started.append(GivesUpFirst(reference_impl, name="reference"))
        return started[-1]

    root = scratch(tmp_path, {"ch03/text-of.yaml": ["text-of-readme-user"]})
    assert reference_failures(load_suite(root), fresh, load_clauses(), "the reference") == [] and len(started) == 2
