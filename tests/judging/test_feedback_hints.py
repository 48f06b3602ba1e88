"""The hints a student reads first fit the bug: graded on every one-bug JS variant of ``tests/support/js/variants``.

A featured case (shown in full first, :func:`conformance.feedback.featured.featured_by_lab`)
must not show a hint naming an observation key that did not diverge, nor a course function
other than the one the case called (issue 27: a project that adds an empty ``sections``
was shown the timestamp hint; one that joins sections before the content was sent to
``currentSystemMessage``). The check reads the hint's words itself, independently of how
:func:`conformance.judging.bearing.fitting_hint` chooses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.feedback.failure_report import failure_report
from conformance.feedback.featured import failure_groups_of, featured_by_lab
from conformance.grading.grader import GradeOptions, SubmissionResult, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.judging.bearing import fitting_hint
from conformance.model.cases import Case
from conformance.reports.formats.terminal import DEFAULT_DETAILS_PER_LAB
from tests.support.js_variants import VARIANTS, ensure_generated
from tests.support.requirements import needs_node

pytestmark = [
    needs_node,
    pytest.mark.xdist_group("js-variants-feedback"),
]

#: Observation keys a hint could name for one of these bugs ("content" and "type" are plain English too).
KEYS: tuple[str, ...] = ("value", "timestamp", "sections", "section_order", "partial", "errorMessage")
KEYS += ("requests", "threw", "finished", "state", "same_object_as")
FUNCTIONS = {"textOf": "text_of", "currentSystemMessage": "current_system_message", "currentSystemPrompt": "current_system_prompt"}
#: Variants whose bug the fixtures have a hint for: their first featured case shows it.
HINTED = (
    "textof-tool-names",
    "replay-last-timestamp",
    "replay-tombstones",
    "error-needs-end",
    "result-is-a-copy",
    "requests-by-reference",
    "shared-partial",
    "exhaustion-throws",
    "abort-checked-early",
    "sections-always",
    "sections-before-content",
    "error-loses-message",
)
ONE_BUG = (*HINTED, "production-not-deferred", "preabort-keeps-turn")


@pytest.fixture(scope="module")
def graded() -> dict[str, SubmissionResult]:
    ensure_generated()
    context = prepare(load_rubric())
    options = GradeOptions(build=False, case_timeout_s=1.0)

    def one(name: str) -> tuple[str, SubmissionResult]:
        return name, grade_submission(f"pi-course:{VARIANTS / name}", context, options, name=name)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, ONE_BUG))


def named_words(hint: str) -> set[str]:
    """Words of a hint, leaving out code such as ``message.content`` (a property of something else)."""
    return set(re.findall(r"(?<![.\w])[A-Za-z_]\w*", hint))


def featured_hints(result: SubmissionResult) -> Iterator[tuple[str, str, set[str], str]]:
    for cases in featured_by_lab(result, DEFAULT_DETAILS_PER_LAB).values():
        for graded in cases:
            hint = fitting_hint(graded.case, graded.outcome)
            divergence = graded.outcome.divergence
            if hint is not None and divergence is not None:
                diverged = set(re.findall(r"[A-Za-z_]\w*", divergence.path)) | {divergence.key}
                yield graded.case.id, graded.case.operation, diverged, hint


@pytest.mark.parametrize("variant", ONE_BUG)
def test_no_featured_hint_names_a_key_or_function_that_did_not_diverge(graded: dict[str, SubmissionResult], variant: str) -> None:
    for case_id, operation, diverged, hint in featured_hints(graded[variant]):
        words = named_words(hint)
        wrong_keys = {key for key in KEYS if key in words} - diverged
        assert not wrong_keys, f"{variant}/{case_id}: the hint names {wrong_keys}, but {diverged} diverged: {hint}"
        wrong_functions = {name for name, op in FUNCTIONS.items() if name in words and op != operation}
        assert not wrong_functions, f"{variant}/{case_id} ({operation}): the hint sends the student to {wrong_functions}: {hint}"


def test_a_bug_the_fixtures_have_a_hint_for_shows_it_first(graded: dict[str, SubmissionResult]) -> None:
    for variant in HINTED:
        first = next(iter(featured_by_lab(graded[variant], DEFAULT_DETAILS_PER_LAB).values()))[0]
        assert fitting_hint(first.case, first.outcome) is not None, f"{variant}: {first.case.id} shows no hint"


def test_an_always_empty_sections_is_shown_the_sections_hint_not_the_timestamp_one(graded: dict[str, SubmissionResult]) -> None:
    shown = [hint for *_, hint in featured_hints(graded["sections-always"])]
    assert shown and "SYS-REPLAY-5" in shown[0], shown
    assert not [hint for hint in shown if "timestamp" in hint or "SYS-REPLAY-6" in hint], shown


#: Variants whose bug uses the wrong item of the case's input: their symptom has a known reading.
WRONG_ITEM = {
    "preabort-keeps-turn": "timestamp 5001 belongs to turns[0], 5002 to turns[1]: the second call (c2) replayed the first turn",
    "replay-last-timestamp": "belongs to messages[1], 0 to messages[0]: the value was taken from a later message",
}


@pytest.mark.parametrize("variant", ONE_BUG)
def test_a_symptom_with_a_known_reading_says_it_first_and_no_other_does(graded: dict[str, SubmissionResult], variant: str) -> None:
    first = next(iter(featured_by_lab(graded[variant], DEFAULT_DETAILS_PER_LAB).values()))[0]
    report = failure_report(first.case, first.outcome, {})
    readings = [line for line in report.splitlines() if line.startswith("  reading: ")]
    if variant in WRONG_ITEM:
        assert len(readings) == 1 and WRONG_ITEM[variant] in readings[0], f"{variant}/{first.case.id}:\n{report}"
    else:
        assert not readings, f"{variant}/{first.case.id}: a reading for a bug that uses no wrong item:\n{report}"


#: Where each one-bug variant's bug is: the operation whose function holds it, and a word its hint must use.
BUG_IN: dict[str, tuple[str, str]] = {
    "textof-tool-names": ("text_of", "textOf"),
    "replay-last-timestamp": ("current_system_message", "currentSystemMessage"),
    "replay-tombstones": ("current_system_message", "currentSystemMessage"),
    "sections-always": ("current_system_message", "currentSystemMessage"),
    "sections-before-content": ("system_message_text", "systemMessageText"),
    "error-needs-end": ("event_stream", "AssistantMessageEventStream"),
    "result-is-a-copy": ("event_stream", "AssistantMessageEventStream"),
    "requests-by-reference": ("scripted_model", "stream()"),
    "shared-partial": ("scripted_model", "scripted-model.ts"),
    "exhaustion-throws": ("scripted_model", "stream()"),
    "abort-checked-early": ("scripted_model", "stream()"),
    "production-not-deferred": ("scripted_model", "queueMicrotask"),
    "error-loses-message": ("scripted_model", "scripted-model.ts"),
    "preabort-keeps-turn": ("scripted_model", ""),
}


def test_every_one_bug_variant_has_its_place() -> None:
    assert set(BUG_IN) == set(ONE_BUG)


@pytest.mark.parametrize("variant", ONE_BUG)
def test_the_first_case_shown_is_in_the_buggy_function_and_its_hint_names_it(graded: dict[str, SubmissionResult], variant: str) -> None:
    """One bug, one cause, shown at its root: the first featured case calls the function the bug is in (issue 37)."""
    operation, word = BUG_IN[variant]
    featured = featured_by_lab(graded[variant], DEFAULT_DETAILS_PER_LAB)
    first = next(iter(featured.values()))[0]
    assert first.case.operation == operation, f"{variant}: shown first is {first.case.id} ({first.case.operation})"
    hint = fitting_hint(first.case, first.outcome)
    if hint is not None and word:
        assert word in hint, f"{variant}/{first.case.id}: the hint does not name {word}: {hint}"


def test_a_bug_in_a_function_others_use_is_one_cause_at_that_function(graded: dict[str, SubmissionResult]) -> None:
    """systemMessageText joining sections first fails its own cases, currentSystemPrompt's and textOf's: one cause, its own."""
    (group,) = failure_groups_of(graded["sections-before-content"])
    cases = [case for case, _ in group.members if isinstance(case, Case)]
    assert group.clause == "SYS-TEXT-1" and group.example[0] is cases[0] and cases[0].operation == "system_message_text"
    assert {case.operation for case in cases} == {"system_message_text", "current_system_prompt", "text_of"}
