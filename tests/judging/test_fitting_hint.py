"""Which bundled hint a divergence gets, without running a project (issue 27 item 1).

The cases aimed at SYS-REPLAY-5 carry its hint: an unexpected ``sections`` key (a project
that always adds ``sections: {}``) gets it; a ``timestamp`` or ``content`` divergence on the
same cases does not, and the timestamp cases' hint is never shown for ``sections``.
"""

from __future__ import annotations

from functools import cache

import pytest

from conformance.judging.bearing import fitting_hint, hint_keys
from conformance.judging.outcome import Divergence, Outcome
from conformance.loading.loader import load_suite
from conformance.model.cases import Case

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


def test_every_first_rung_names_a_key_it_can_be_shown_for() -> None:
    # fitting_hint shows a first rung only for a divergence whose deepest key it names: a rung
    # naming none of HINT_KEYS would never be shown, however well it describes the bug.
    silent = [case.id for case in load_suite().cases if case.hint and not hint_keys(case.hint[0])]
    assert not silent, f"first hint rungs that name no observation key: {silent}"


#: A case aimed at a clause, the divergence its bug makes, and the clause its hint must cite.
AIMED = (
    ("sys-replay-no-system-message", Divergence("value", "null", '{"role": "system"}'), "SYS-REPLAY-1"),
    ("make-text-empty", Divergence("value.text", '""', "null"), "IR-MAKE-1"),
    ("make-user-message-empty-string", Divergence("value.content", "1 item", "0 items", kind="missing"), "IR-MAKE-2"),
    ("make-assistant-length", Divergence("value.stopReason", '"length"', '"stop"'), "IR-STOP-1"),
    ("make-assistant-override-usage-zero", Divergence("value.usage.input", "0", "1"), "IR-USAGE-1"),
    ("text-of-system-with-sections", Divergence("value", '"You are Pi.\\n\\nRULE v1"', '"RULE v1\\n\\nYou are Pi."'), "IR-TEXT-3"),
    ("sm-req-all-roles-recorded-exactly", Divergence("steps[5].requests[0].messages", "4 items", "3 items", kind="missing"), "IR-CTX-1"),
    (
        "sm-err-rate-limited-keeps-partial-text",
        Divergence("steps[1].events[0].partial.errorMessage", '"rate limited"', "(absent)", kind="missing"),
        "SM-ERR-1",
    ),
    ("sm-err-result-without-consuming-resolves", Divergence("steps[1].state", '"resolved"', '"rejected"'), "SM-ERR-2"),
    ("sm-err-after-normal-turn", Divergence("steps[3].events[2].type", '"error"', '"done"'), "SM-ERR-2"),
    ("sm-tool-same-name-calls-keep-their-ids", Divergence("steps[1].events[1].partial.content[0].id", '"call_9"', '"call_1"'), "SM-TOOL-3"),
    ("sm-exhaust-and-pre-aborted-either-error", Divergence("steps[1].finished", "true", "false"), "SM-ABORT-4"),
    ("stream-second-done-ignored", Divergence("steps[2].value.content[0].text", '"a"', '"b"'), "STREAM-4"),
    ("stream-end-wakes-waiting-consumer", Divergence("steps[2].finished", "true", "false"), "STREAM-5"),
    ("stream-end-twice-without-terminal", Divergence("steps[2].threw", "null", '"closed"'), "STREAM-5"),
    ("stream-generic-pending-until-terminal", Divergence("steps[2].state", '"pending"', '"resolved"'), "STREAM-6"),
    ("stream-generic-end-value-without-terminal-resolves", Divergence("steps[2].state", '"resolved"', '"pending"'), "STREAM-7"),
    ("stream-generic-iterator-by-hand", Divergence("steps[4].state", '"resolved"', '"pending"'), "STREAM-8"),
    (
        "sm-tool-turn-leaves-caller-context-alone",
        Divergence("steps[3].context.messages", "1 item", "2 items", kind="unexpected"),
        "SM-CTX-1",
    ),
    ("sm-result-is-not-the-script-turn", Divergence("steps[3].turns_unchanged", "true", "false"), "SM-DONE-3"),
)


@pytest.mark.parametrize(("case_id", "divergence", "clause"), AIMED, ids=[case_id for case_id, *_ in AIMED])
def test_the_hint_of_a_case_aimed_at_a_clause_is_shown_for_its_bug(case_id: str, divergence: Divergence, clause: str) -> None:
    hint = fitting_hint(case(case_id), failed(case_id, divergence))
    assert hint is not None and clause in hint, hint
