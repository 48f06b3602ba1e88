"""course-ts at chapters 05 and 06 gets full marks; one-bug TypeScript variants lose points only in their own lab.

The variants patch src/provider-adapter.ts (chapter 05) or src/tool.ts (chapter 06).

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
from conformance.model.cases import LABS
from tests.support.course_projects import PACKAGE, chapter_05, chapter_06, chapter_09
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


def _check_costs_only_its_own_lab(project: Path, module: str, patch: tuple[str, str, str, str]) -> None:
    """Patch ``src/<module>.ts`` of ``project``, grade it: only the patch's lab loses points, its case fails, nothing else does."""
    find, replace, lab, case_id = patch
    source = project / PACKAGE / "src" / f"{module}.ts"
    text = source.read_text(encoding="utf-8")
    assert text.count(find) == 1, f"the patched text moved in {source.name}: {find!r}"
    source.write_text(text.replace(find, replace), encoding="utf-8")
    result = grade_submission(f"pi-course:{project}", prepare(load_rubric()))
    assert result.status == "ok", result.detail
    short = [graded.lab for graded in result.score.labs if graded.points < graded.max_points]
    assert short == [lab]
    failed = {graded.case.id: graded.outcome for graded in result.score.cases if not graded.passed}
    assert case_id in failed and all(outcome.status == "failed" for outcome in failed.values())


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_tool_ts_bug_costs_only_its_own_lab(variant: str, tmp_path: Path) -> None:
    _check_costs_only_its_own_lab(chapter_06(tmp_path / variant), "tool", VARIANTS[variant])


def test_the_typed_port_at_chapter_06_gets_full_marks(tmp_path: Path) -> None:
    project = chapter_06(tmp_path / "student")
    result = grade_submission(f"pi-course:{project}", prepare(load_rubric()))
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 250, 250), result.detail
    assert result.chapter == "chapter 06: src/tool.ts exists; not graded: labs 7.1, 7.2, 7.3, 7.4, 7.5, 9.1, 9.2, 9.3, 9.4, 9.5"
    assert not (project / PACKAGE / "dist").exists() and not (project / "node_modules").exists()


#: variant -> (the text of src/provider-adapter.ts it replaces, its replacement, the lab it costs, a case it fails)
PROVIDER_VARIANTS = {
    "empty-text-not-null": (
        "content: joinedText(message.content) || null }",
        "content: joinedText(message.content) }",
        "5.1",
        "prov-msg-assistant-null-only-without-text",
    ),
    "length-parses-arguments": ('if (reason === "toolUse") {', 'if (reason !== "stop") {', "5.2", "prov-model-course-length-keeps-raw"),
    "key-not-redacted": (
        'const message = apiKey ? text.split(apiKey).join("[redacted]") : text;',
        "const message = text;",
        "5.3",
        "prov-key-course-fetch-error-redacted",
    ),
}


@pytest.mark.parametrize("variant", sorted(PROVIDER_VARIANTS))
def test_a_provider_adapter_ts_bug_costs_only_its_own_lab(variant: str, tmp_path: Path) -> None:
    _check_costs_only_its_own_lab(chapter_05(tmp_path / variant), "provider-adapter", PROVIDER_VARIANTS[variant])


def test_the_typed_port_at_chapter_05_gets_full_marks_out_of_its_chapters(tmp_path: Path) -> None:
    project = chapter_05(tmp_path / "student")
    result = grade_submission(f"pi-course:{project}", prepare(load_rubric()))
    assert (result.status, result.score.points, result.score.max_points) == ("ok", 175, 175), result.detail
    assert (
        result.chapter
        == "chapter 05: src/provider-adapter.ts exists; not graded: labs 6.1, 6.2, 6.3, 7.1, 7.2, 7.3, 7.4, 7.5, 9.1, 9.2, 9.3, 9.4, 9.5"
    )


def test_the_typed_port_at_chapter_09_gets_full_marks_and_a_reducer_bug_costs_only_lab_9_1(tmp_path: Path) -> None:
    project = chapter_09(tmp_path / "student")
    result = grade_submission(f"pi-course:{project}", prepare(load_rubric()))
    # course-ts-09 is laid over chapter 06: it has no src/agent-loop.ts (no typed port of chapter 07 yet), so labs
    # 7.1-7.5 are skipped for want of agent-loop.js and earn nothing, and its agent.ts has the reducer alone (no
    # Agent: the handshake does not offer run_agent), so labs 9.2-9.5 earn nothing; every other lab earns full marks.
    assert (result.status, result.score.max_points) == ("ok", 500), result.detail
    assert {graded.lab: graded.points for graded in result.score.labs if graded.points < graded.max_points} == dict.fromkeys(
        ("7.1", "7.2", "7.3", "7.4", "7.5", "9.2", "9.3", "9.4", "9.5"), 0
    )
    superseded = "not graded at chapter 09, which changes what they check: loop-model-stream-throws"
    assert result.chapter == f"chapter 09: src/agent.ts exists; {superseded}"
    # One bug in src/agent.ts (a late event of another run is applied): only AGENT-STATE-4's cases of lab 9.1 fail.
    buggy = chapter_09(tmp_path / "ignores-run-id")
    agent = buggy / PACKAGE / "src" / "agent.ts"
    find = 'if (state.status !== "running" || state.activeRunId !== event.runId) return state;'
    text = agent.read_text(encoding="utf-8")
    assert text.count(find) == 1, "the patched text moved in course-ts-09's agent.ts"
    agent.write_text(text.replace(find, 'if (state.status !== "running") return state;'), encoding="utf-8")
    result = grade_submission(f"pi-course:{buggy}", prepare(load_rubric()))
    assert result.status == "ok", result.detail
    # Short: chapter 07's labs and 9.2-9.5 as above, and now lab 9.1.
    short = [graded.lab for graded in result.score.labs if graded.points < graded.max_points]
    assert short == [lab for lab in LABS if lab.startswith(("7.", "9."))]
    failed = [graded.case for graded in result.score.cases if graded.outcome.status == "failed"]
    assert failed and all("AGENT-STATE-4" in case.clauses for case in failed)
