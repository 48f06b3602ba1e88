"""Which bundled hint a divergence gets, without running a project (issue 27 item 1).

The cases aimed at SYS-REPLAY-5 carry its hint: an unexpected ``sections`` key (a project
that always adds ``sections: {}``) gets it; a ``timestamp`` or ``content`` divergence on the
same cases does not, and the timestamp cases' hint is never shown for ``sections``.
"""

from __future__ import annotations

from functools import cache

import pytest

from conformance.judging.feedback import fitting_hint
from conformance.judging.outcome import Divergence, Outcome
from conformance.loading.cases import Case
from conformance.loading.loader import load_suite

#: The cases whose description says the result carries no sections key when none is left.
SECTIONS_CASES = (
    "sys-replay-empty-sections-object-no-key",
    "sys-replay-only-null-sections-no-key",
    "sys-replay-all-sections-deleted",
    "sys-replay-single-instruction-before-readme",
)


@cache
def case(case_id: str) -> Case:
    return next(case for case in load_suite().cases if case.id == case_id)


def failed(case_id: str, divergence: Divergence) -> Outcome:
    return Outcome(case_id, "failed", str(divergence), 0.0, divergence=divergence)


EMPTY_SECTIONS = Divergence("value", "(absent)", "{}", kind="unexpected", key="sections")


@pytest.mark.parametrize("case_id", SECTIONS_CASES)
def test_an_unexpected_empty_sections_gets_the_sections_hint(case_id: str) -> None:
    hint = fitting_hint(case(case_id), failed(case_id, EMPTY_SECTIONS))
    assert hint is not None and "SYS-REPLAY-5" in hint and "timestamp" not in hint


@pytest.mark.parametrize("case_id", SECTIONS_CASES)
def test_the_sections_hint_is_not_shown_for_another_key(case_id: str) -> None:
    assert fitting_hint(case(case_id), failed(case_id, Divergence("value.timestamp", "10", "30"))) is None
    assert fitting_hint(case(case_id), failed(case_id, Divergence("value.content", '"Base"', '""'))) is None


def test_the_timestamp_hint_is_not_shown_for_an_unexpected_sections() -> None:
    timestamp_cases = [case for case in load_suite().cases if case.hint and "SYS-REPLAY-6" in case.hint[0]]
    assert timestamp_cases
    for timestamp_case in timestamp_cases:
        assert fitting_hint(timestamp_case, failed(timestamp_case.id, EMPTY_SECTIONS)) is None
        assert fitting_hint(timestamp_case, failed(timestamp_case.id, Divergence("value.timestamp", "0", "5"))) is not None
