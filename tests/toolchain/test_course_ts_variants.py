"""course-ts at chapter 06 gets full marks; one-bug TypeScript variants of its src/tool.ts lose points only in their own lab.

The JavaScript variants (tests/support/js/variants) prove the same for compiled modules; these go
through the whole path a student's TypeScript takes: the build's copy, the staff files, the pinned
tsc, then the adapter under the sandbox, limits and permission model. Each patch type-checks
(a variant that failed to build would prove nothing about its lab).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.grading.grader import grade_submission, prepare
from conformance.grading.rubric import load_rubric
from tests.support.course_projects import PACKAGE, chapter_06, chapter_09
from tests.support.requirements import needs_node, needs_npm, needs_toolchain

pytestmark = [needs_node, needs_npm, needs_toolchain]

#: variant -> (the text of src/tool.ts it replaces, its replacement, the lab it costs, a case it fails)
VARIANTS = {
    "list-sorted-by-name": (
        "    return [...this.#tools.values()];\n",
        "    return [...this.#tools.values()].sort((a, b) => a.name.localeCompare(b.name));\n",
        "6.2",
        "tool-reg-list-registration-order",
    ),
    "context-drops-signal": (
        "await tool.execute(parameters, { ...context, callId: call.id });",
        "await tool.execute(parameters, { callId: call.id, reportProgress: context.reportProgress });",
        "6.3",
        "tool-exec-course-context-and-domain-error",
    ),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_tool_ts_bug_costs_only_its_own_lab(variant: str, tmp_path: Path) -> None:
    find, replace, lab, case_id = VARIANTS[variant]
    project = chapter_06(tmp_path / variant)
    tool = project / PACKAGE / "src" / "tool.ts"
    text = tool.read_text(encoding="utf-8")
    assert text.count(find) == 1, f"{variant}: the patched text moved in course-ts's tool.ts"
    tool.write_text(text.replace(find, replace), encoding="utf-8")
    result = grade_submission(f"pi-course:{project}", prepare(load_rubric()))
    assert result.status == "ok", result.detail
    short = [graded.lab for graded in result.score.labs if graded.points < graded.max_points]
    assert short == [lab]
    failed = {graded.case.id: graded.outcome for graded in result.score.cases if not graded.passed}
    assert case_id in failed and all(outcome.status == "failed" for outcome in failed.values())


def test_the_typed_port_at_chapter_06_gets_full_marks(tmp_path: Path) -> None:
    project = chapter_06(tmp_path / "student")
    result = grade_submission(f"pi-course:{project}", prepare(load_rubric()))
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 175, 175), result.detail
    assert result.chapter == "chapter 06: src/tool.ts exists; not graded: lab 9.1"
    assert not (project / PACKAGE / "dist").exists() and not (project / "node_modules").exists()


def test_the_typed_port_at_chapter_09_gets_full_marks_and_a_reducer_bug_costs_only_lab_9_1(tmp_path: Path) -> None:
    project = chapter_09(tmp_path / "student")
    result = grade_submission(f"pi-course:{project}", prepare(load_rubric()))
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 200, 200), result.detail
    assert result.chapter == "chapter 09: src/agent.ts exists"
    # One bug in src/agent.ts (a late event of another run is applied): only AGENT-STATE-4's cases of lab 9.1 fail.
    buggy = chapter_09(tmp_path / "ignores-run-id")
    agent = buggy / PACKAGE / "src" / "agent.ts"
    find = 'if (state.status !== "running" || state.activeRunId !== event.runId) return state;'
    text = agent.read_text(encoding="utf-8")
    assert text.count(find) == 1, "the patched text moved in course-ts-09's agent.ts"
    agent.write_text(text.replace(find, 'if (state.status !== "running") return state;'), encoding="utf-8")
    result = grade_submission(f"pi-course:{buggy}", prepare(load_rubric()))
    assert result.status == "ok", result.detail
    assert [graded.lab for graded in result.score.labs if graded.points < graded.max_points] == ["9.1"]
    failed = [graded.case for graded in result.score.cases if not graded.passed]
    assert failed and all("AGENT-STATE-4" in case.clauses for case in failed)
