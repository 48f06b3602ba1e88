"""A course repository is graded on the chapters it has reached (docs/grading.md, "The chapter a repository is at").

course-correct is at chapter 04 (no provider-adapter.js, no tool.js, no agent-loop.js, no agent.js); the
chapter 05 folders of tests/support/js/variants add provider-adapter.js, the chapter 06 ones tool.js
too, the chapter 07 ones agent-loop.js too, the chapter 09 ones agent.js too. A chapter 04 repository
keeps its 100/100 with the default rubric, whose later labs it is not charged for; a chapter 05 one is
graded on labs 3.1-5.3 (175), a chapter 06 one on labs 3.1-6.3 (250), a chapter 07 one on labs
3.1-7.5 (375), a chapter 09 one on labs 9.1-9.5 too (500); every report says which chapter was detected
and why.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from conformance.adapters.course_chapters import DetectedChapter, detect_chapter
from conformance.gradescope import results as gradescope
from conformance.grading.chapter_scope import ChapterScope, lab_chapter, scoped
from conformance.grading.grader import GradingContext, SubmissionResult, grade_submission, prepare
from conformance.grading.result_json import result_from_json, result_to_json
from conformance.grading.rubric import load_rubric
from conformance.reports.formats import terminal
from tests.support.course_projects import chapter_05, chapter_06
from tests.support.js_variants import JS, ensure_generated
from tests.support.requirements import needs_node

CHAPTER_04_LABS = {"3.1", "3.2", "4.1", "4.2"}
CHAPTER_05_LABS = {"5.1", "5.2", "5.3"}
CHAPTER_06_LABS = CHAPTER_04_LABS | CHAPTER_05_LABS | {"6.1", "6.2", "6.3"}
CHAPTER_07_LABS = {"7.1", "7.2", "7.3", "7.4", "7.5"}
CHAPTER_09_LABS = {"9.1", "9.2", "9.3", "9.4", "9.5"}
LATER_7 = "7.1, 7.2, 7.3, 7.4, 7.5, 9.1, 9.2, 9.3, 9.4, 9.5"
LATER_LABS = f"not graded: labs 5.1, 5.2, 5.3, 6.1, 6.2, 6.3, {LATER_7}"


@pytest.fixture(scope="module")
def context() -> GradingContext:
    ensure_generated()
    return prepare(load_rubric())


def _grade(folder: str, context: GradingContext) -> SubmissionResult:
    return grade_submission(f"pi-course:{JS / folder}", context)


def test_the_chapter_is_read_from_the_modules_the_project_has(tmp_path: Path) -> None:
    ensure_generated()
    at_04 = detect_chapter(JS / "course-correct")
    reason = (
        "there is no src/provider-adapter.ts or src/tool.ts or src/agent-loop.ts or src/agent.ts (nor their compiled .js):"
        " chapters 03 and 04 are graded"
    )
    assert (at_04.chapter, at_04.reason) == ("04", reason)
    assert detect_chapter(JS / "variants" / "chapter-06").reason == "dist/src/tool.js exists"
    assert detect_chapter(JS / "variants" / "chapter-05") == DetectedChapter("05", "dist/src/provider-adapter.js exists")
    # Chapter 05's starter counts too: its labs are skipped, and the reason says why.
    provider_starter = detect_chapter(JS / "variants" / "provider-starter")
    assert provider_starter.chapter == "05" and "placeholder" in provider_starter.reason
    # The course's starter still counts: the student has started chapter 06.
    starter = detect_chapter(JS / "variants" / "tool-starter")
    assert starter.chapter == "06" and "placeholder" in starter.reason
    # Sources are enough: a repository that was never built is at chapter 06 once src/tool.ts exists.
    sources = detect_chapter(chapter_06(tmp_path / "repository"))
    assert (sources.chapter, sources.reason) == ("06", "src/tool.ts exists")
    assert detect_chapter(chapter_05(tmp_path / "at-05")) == DetectedChapter("05", "src/provider-adapter.ts exists")
    # agent-loop.js puts a project at chapter 07, its starter too.
    assert detect_chapter(JS / "variants" / "chapter-07") == DetectedChapter("07", "dist/src/agent-loop.js exists")
    loop_starter = detect_chapter(JS / "variants" / "loop-starter")
    assert loop_starter.chapter == "07" and loop_starter.reason.startswith("dist/src/agent-loop.js exists (it still throws")


def test_a_repository_with_an_agent_module_is_at_chapter_09(tmp_path: Path) -> None:
    ensure_generated()
    at_09 = detect_chapter(JS / "variants" / "chapter-09")
    assert (at_09.chapter, at_09.reason) == ("09", "dist/src/agent.js exists")
    # The course's starter (reduceAgentState throws "Lab 9.1 reducer 尚未实现") still counts: chapter 09 is started.
    starter = detect_chapter(JS / "variants" / "agent-starter")
    assert starter.chapter == "09" and "placeholder" in starter.reason
    # Sources are enough: src/agent.ts decides, even beside a src/tool.ts.
    repository = chapter_06(tmp_path / "repository")
    agent = repository / "packages" / "pi-course" / "src" / "agent.ts"
    agent.write_text("export const reduceAgentState = () => undefined;\n", encoding="utf-8")
    assert (detect_chapter(repository).chapter, detect_chapter(repository).reason) == ("09", "src/agent.ts exists")


def test_the_default_rubric_grades_chapters_05_to_09(context: GradingContext) -> None:
    assert set(context.rubric.labs) == CHAPTER_06_LABS | CHAPTER_07_LABS | CHAPTER_09_LABS
    assert context.rubric.max_score == 500
    # Every later lab weighs what the others do, the Agent's labs 9.2-9.5 included.
    later = CHAPTER_05_LABS | CHAPTER_07_LABS | CHAPTER_09_LABS
    assert {context.rubric.labs[lab].weight for lab in later} == {context.rubric.labs["4.1"].weight} == {25}


@needs_node
def test_a_chapter_04_repository_keeps_full_marks_and_is_told_why(context: GradingContext) -> None:
    result = _grade("course-correct", context)
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 100, 100)
    assert {lab.lab for lab in result.score.labs} == CHAPTER_04_LABS
    assert not any(graded.case.chapter in ("05", "06", "07", "09") for graded in result.score.cases)
    assert result.chapter.startswith("chapter 04: there is no src/provider-adapter.ts or src/tool.ts")
    assert result.chapter.endswith(LATER_LABS)
    assert f"graded at {result.chapter}" in terminal.render(result, context.clauses)
    document = json.loads(gradescope.render(result, context.clauses))
    assert document["score"] == 100 and document["extra_data"]["chapter"] == result.chapter
    assert result.chapter in str(document["output"])


@needs_node
def test_a_chapter_06_repository_is_graded_up_to_lab_6_3(context: GradingContext) -> None:
    result = _grade("variants/chapter-06", context)
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 250, 250)
    assert result.chapter == f"chapter 06: dist/src/tool.js exists; not graded: labs {LATER_7}"


@needs_node
def test_a_chapter_07_repository_is_graded_on_every_lab(context: GradingContext) -> None:
    result = _grade("variants/chapter-07", context)
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 375, 375)
    assert {lab.lab for lab in result.score.labs} >= CHAPTER_07_LABS
    assert result.chapter == "chapter 07: dist/src/agent-loop.js exists; not graded: labs 9.1, 9.2, 9.3, 9.4, 9.5"


@needs_node
@pytest.mark.parametrize(
    ("folder", "lab"),
    [
        ("variants/shares-caller-transcript", "7.1"),
        ("variants/results-in-completion-order", "7.4"),
        ("variants/sequential-batch", "7.4"),
        ("variants/loses-siblings", "7.4"),
        ("variants/two-turn-ends-at-limit", "7.5"),
        ("variants/max-steps-off-by-one", "7.5"),
    ],
)
def test_a_loop_bug_costs_only_its_own_lab(folder: str, lab: str, context: GradingContext) -> None:
    result = _grade(folder, context)
    short = {graded.lab for graded in result.score.labs if graded.points < graded.max_points}
    assert short == {lab} and result.score.max_points == 375


@needs_node
def test_the_loop_starter_earns_nothing_in_chapter_07_and_keeps_the_rest(context: GradingContext) -> None:
    result = _grade("variants/loop-starter", context)
    points = {lab.lab: lab.points for lab in result.score.labs}
    assert points == {lab: (0 if lab in CHAPTER_07_LABS else 25) for lab in CHAPTER_06_LABS | CHAPTER_07_LABS}
    assert result.status == "ok" and "placeholder" in result.chapter


@needs_node
def test_a_chapter_05_repository_is_graded_on_labs_3_1_to_5_3(context: GradingContext) -> None:
    result = _grade("variants/chapter-05", context)
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 175, 175)
    assert {lab.lab for lab in result.score.labs} == CHAPTER_04_LABS | CHAPTER_05_LABS
    assert result.chapter == f"chapter 05: dist/src/provider-adapter.js exists; not graded: labs 6.1, 6.2, 6.3, {LATER_7}"


@needs_node
def test_a_chapter_09_repository_is_graded_on_the_reducer_and_the_agent_too(context: GradingContext) -> None:
    result = _grade("variants/chapter-09", context)
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 500, 500)
    assert {lab.lab for lab in result.score.labs} == CHAPTER_06_LABS | CHAPTER_07_LABS | CHAPTER_09_LABS
    superseded = "not graded at chapter 09, which changes what they check: loop-model-stream-throws"
    assert result.chapter == f"chapter 09: dist/src/agent.js exists; {superseded}"


@needs_node
@pytest.mark.parametrize(
    ("folder", "clause", "agent_cases"),
    [
        ("variants/reducer-ignores-run-id", "AGENT-STATE-4", set()),
        ("variants/reducer-mutates-state", "AGENT-STATE-1", set()),
        ("variants/reducer-shares-result-messages", "AGENT-STATE-3", set()),
        # The Agent reduces with the student's own reducer (it is in agent.js): a case that snapshots the state sees the bug.
        # The lab 9.3 case cites the reducer's clause: lab 9.1's own failures of that clause excuse it
        # (attribution's rule 7) when they cost at least as much, so only lab 9.1 loses points;
        # AGENT-STATE-7 fails one lab 9.1 case, which costs less than the lab 9.3 case, so both pay.
        ("variants/reducer-keeps-streaming-text", "AGENT-STATE-7", {"agent-pending-ids-follow-the-loop"}),
        ("variants/reducer-keeps-pending-id", "AGENT-STATE-6", {"agent-pending-ids-follow-the-loop"}),
    ],
)
def test_a_reducer_bug_costs_only_lab_9_1_and_fails_only_the_agent_cases_that_show_the_state(
    folder: str, clause: str, agent_cases: set[str], context: GradingContext
) -> None:
    result = _grade(folder, context)
    short = {graded.lab for graded in result.score.labs if graded.points < graded.max_points}
    failed = [graded.case for graded in result.score.cases if graded.outcome.status != "passed"]
    excused = {graded.case.id for graded in result.score.cases if graded.inherited is not None and graded.case.lab != "9.1"}
    charged = {"9.3"} if agent_cases - excused else set()
    assert short == {"9.1", *charged} and result.score.max_points == 500
    assert excused == (agent_cases if clause == "AGENT-STATE-6" else set())
    assert failed and all(case.lab == "9.1" and clause in case.clauses for case in failed if case.id not in agent_cases)
    assert {case.id for case in failed if case.lab != "9.1"} == agent_cases


@needs_node
@pytest.mark.parametrize(
    ("folder", "labs"),
    [
        ("variants/busy-guard-missing", {"9.2"}),
        ("variants/state-not-copied", {"9.3"}),
        # Its two lab 9.5 cases that abort cite lab 9.4's clauses (AGENT-ABORT-3, AGENT-ABORT-4):
        # lab 9.4's own failures of those clauses excuse them (attribution's rule 7).
        ("variants/abort-misses-run", {"9.4"}),
        ("variants/steering-dropped", {"9.5"}),
        ("variants/follow-ups-lost", {"9.5"}),
        # Still two labs (issue 35): lab 9.2's course test and lab 9.3's queue case cite each
        # other's clauses, and their symptoms differ, so no rule can tell whose bug it is.
        ("variants/run-end-before-cleanup", {"9.2", "9.3"}),
        ("variants/listeners-before-reduce", {"9.2", "9.3"}),
    ],
)
def test_an_agent_bug_costs_only_its_own_lab_but_where_the_labs_cite_each_other(
    folder: str, labs: set[str], context: GradingContext
) -> None:
    result = _grade(folder, context)
    short = {graded.lab for graded in result.score.labs if graded.points < graded.max_points}
    assert short == labs and result.score.max_points == 500


@needs_node
def test_the_reducer_starter_earns_nothing_in_lab_9_1_and_keeps_the_rest(context: GradingContext) -> None:
    result = _grade("variants/agent-starter", context)
    points = {lab.lab: lab.points for lab in result.score.labs}
    # Its agent.js has no Agent: the handshake does not offer run_agent, so labs 9.2-9.5 earn nothing either.
    assert points == {lab: (0 if lab in CHAPTER_09_LABS else 25) for lab in context.rubric.labs}
    assert result.status == "ok" and "placeholder" in result.chapter


@needs_node
@pytest.mark.parametrize(("folder", "lab"), [("variants/duplicate-overwrites", "6.2"), ("variants/failure-names-error-type", "6.3")])
def test_a_tool_bug_costs_only_its_own_lab(folder: str, lab: str, context: GradingContext) -> None:
    result = _grade(folder, context)
    short = {graded.lab: graded.max_points - graded.points for graded in result.score.labs if graded.points < graded.max_points}
    assert list(short) == [lab] and result.score.max_points == 250


@needs_node
@pytest.mark.parametrize(
    ("folder", "lab"),
    [
        ("variants/tool-result-as-user", "5.1"),
        ("variants/arguments-not-stringified", "5.1"),
        ("variants/missing-finish-is-done", "5.2"),
        ("variants/utf8-not-streamed", "5.3"),
        ("variants/key-not-redacted", "5.3"),
    ],
)
def test_a_provider_bug_costs_only_its_own_lab(folder: str, lab: str, context: GradingContext) -> None:
    result = _grade(folder, context)
    short = {graded.lab: graded.max_points - graded.points for graded in result.score.labs if graded.points < graded.max_points}
    assert list(short) == [lab] and result.score.max_points == 175 and result.chapter.startswith("chapter 05: ")


@needs_node
def test_the_starter_earns_nothing_in_chapter_06_and_keeps_chapter_04(context: GradingContext) -> None:
    result = _grade("variants/tool-starter", context)
    points = {lab.lab: lab.points for lab in result.score.labs}
    assert points == {"3.1": 25, "3.2": 25, "4.1": 25, "4.2": 25, "5.1": 25, "5.2": 25, "5.3": 25, "6.1": 0, "6.2": 0, "6.3": 0}
    assert result.status == "ok" and "placeholder" in result.chapter


@needs_node
def test_the_provider_starter_earns_nothing_in_chapter_05_and_keeps_chapter_04(context: GradingContext) -> None:
    result = _grade("variants/provider-starter", context)
    points = {lab.lab: lab.points for lab in result.score.labs}
    assert points == {"3.1": 25, "3.2": 25, "4.1": 25, "4.2": 25, "5.1": 0, "5.2": 0, "5.3": 0}
    assert result.status == "ok" and result.chapter.startswith("chapter 05: dist/src/provider-adapter.js exists (it still throws")


@needs_node
def test_a_batch_parent_scopes_a_workers_result_itself(context: GradingContext) -> None:
    # The parent of a batch rebuilds the score from the worker's outcomes and the chapter it reads itself.
    result = _grade("course-correct", context)
    rebuilt = result_from_json(result_to_json(result), context)
    assert (rebuilt.score.points, rebuilt.score.max_points, rebuilt.chapter) == (100, 100, result.chapter)


def test_scoping_leaves_out_later_labs_once_and_keeps_other_names(context: GradingContext) -> None:
    at_04 = ChapterScope("04", "why")
    narrowed, line = scoped(context, at_04)
    assert set(narrowed.rubric.labs) == CHAPTER_04_LABS and {case.lab for case in narrowed.cases} == CHAPTER_04_LABS
    assert line == f"chapter 04: why; {LATER_LABS}"
    # Again (the batch parent after the worker): the same context and the same line.
    assert scoped(narrowed, at_04) == (narrowed, line)
    # No chapter (reference, python:, cmd:) or a chapter every lab is in: unchanged, and no line without a chapter.
    assert scoped(context, ChapterScope()) == (context, "")
    at_09, _ = scoped(context, ChapterScope("09", "agent.ts"))
    assert at_09.rubric is context.rubric and at_09.superseded == ("loop-model-stream-throws",)
    assert set(scoped(context, ChapterScope("07", "agent-loop.ts"))[0].rubric.labs) == CHAPTER_06_LABS | CHAPTER_07_LABS
    assert set(scoped(context, ChapterScope("06", "tool.ts"))[0].rubric.labs) == CHAPTER_06_LABS
    # A rubric of chapter 06 only, for a repository at chapter 04: every lab graded rather than nothing out of nothing.
    later = dataclasses.replace(context, rubric=dataclasses.replace(context.rubric, labs={"6.1": context.rubric.labs["6.1"]}))
    assert scoped(later, at_04)[0] is later
    chapters = [lab_chapter(lab) for lab in ("9.1", "7.4", "6.3", "5.2", "4.1", "streaming")]
    assert chapters == ["09", "07", "06", "05", "04", None]


def test_a_case_of_a_clause_chapter_09_supersedes_is_not_graded_at_chapter_09(context: GradingContext) -> None:
    # LOOP-TURN-2: chapter 07's loop rejects when the model throws; chapter 09's catches it
    # (AGENT-LOOP-2), so a correct chapter-09 repository fails loop-model-stream-throws.
    assert context.clauses["LOOP-TURN-2"].superseded_at == "09"
    assert context.clauses["LOOP-END-1"].superseded_at is None
    ids = {case.id for case in context.cases}
    at_07, line_07 = scoped(context, ChapterScope("07", "agent-loop.ts"))
    assert "loop-model-stream-throws" in {case.id for case in at_07.cases} and "changes what they check" not in line_07
    at_09, line_09 = scoped(context, ChapterScope("09", "agent.ts"))
    assert {case.id for case in at_09.cases} == ids - {"loop-model-stream-throws"}
    assert line_09 == "chapter 09: agent.ts; not graded at chapter 09, which changes what they check: loop-model-stream-throws"
    # Scoping again (the batch parent after the worker) says the same and drops nothing more.
    assert scoped(at_09, ChapterScope("09", "agent.ts")) == (at_09, line_09)
    # No chapter (the reference, python:, cmd:): every case, the superseded one included.
    assert scoped(context, ChapterScope())[0].cases == context.cases
