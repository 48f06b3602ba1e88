"""The hints a student reads first fit the bug: graded on every one-bug JS variant of ``tests/support/js/variants``.

A featured case (shown in full first, :func:`conformance.grading.featured.featured_by_lab`)
must not show a hint naming an observation key that did not diverge, nor a course function
other than the one the case called (issue 27: a project that adds an empty ``sections``
was shown the timestamp hint; one that joins sections before the content was sent to
``currentSystemMessage``). The check reads the hint's words itself, independently of how
:func:`conformance.judging.feedback.fitting_hint` chooses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.grading.featured import featured_by_lab
from conformance.grading.grader import GradeOptions, SubmissionResult, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.judging.feedback import failure_report, fitting_hint
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
