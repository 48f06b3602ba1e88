"""Lab isolation: later labs play over the reference of earlier chapters' modules (conformance/adapters/node/lab_isolation.mjs).

With in-thread module hooks (Node.js 22.19+ and 24), a student's lab 4 module imports the
package's reference (``conformance/adapters/node/reference/``) wherever it imports its own lab 3
modules, so a lab 3.2 bug changes no lab 4 outcome, and grading takes lab 3 out of lab 4's
evidence. Node.js 20 has no such hooks (its hooks run in a worker, which the permission model
denies): there lab 4 plays over the student's own modules, and the attribution rules stand in.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance.adapters.lab_isolation import isolated_labs, isolates
from conformance.adapters.pi_course import pi_course_adapter
from conformance.adapters.settings import ImplSettings
from conformance.grading.grader import GradeOptions, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.grading.scoring import Score
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite
from conformance.model.clauses import load_clauses
from conformance.running.engine import run_alone
from tests.support.attack_projects import MODULES, copy_project
from tests.support.grading_batch import patched_copy
from tests.support.isolation_projects import make_bypass_project, make_forging_project
from tests.support.js_variants import JS, ensure_generated
from tests.support.node_versions import node_on_path, node_params
from tests.support.paths import REPO
from tests.support.requirements import needs_node

pytestmark = needs_node
REFERENCE = REPO / "conformance" / "adapters" / "node" / "reference"
LAB_4 = ("4.1", "4.2")
LAB_7 = ("7.1", "7.2", "7.3", "7.4", "7.5")
#: What a chapter 07 loop's cases are isolated from: every lab of the modules it imports (types, event-stream, scripted-model, tool).
BEFORE_7 = frozenset({"3.1", "3.2", "4.1", "4.2", "6.1", "6.2", "6.3"})
#: The Agent's labs: agent.js's ./agent-loop.js stays the student's (its chapter 09 additions are these labs' code).
AGENT_LABS = ("9.2", "9.3", "9.4", "9.5")


def graded(project: Path) -> Score:
    """The default rubric's score of the (unbuilt) project, unsandboxed: the permission model and the hooks alone hold."""
    options = GradeOptions(settings=ImplSettings(sandbox="none"), build=False)
    result = grade_submission(f"pi-course:{project}", prepare(load_rubric()), options, name=project.name)
    assert result.status in ("ok", "hung"), result.detail
    return result.score


def statuses(score: Score, labs: tuple[str, ...]) -> dict[str, str]:
    return {case.case.id: case.outcome.status for case in score.cases if case.case.lab in labs}


def isolating(release: str | None) -> bool:
    """Whether the Node.js the release puts on PATH isolates (None: the machine's, 20.x here)."""
    return release is not None


def test_the_table_names_lab_4_isolated_from_lab_3_on_node_22_and_later_only() -> None:
    lab_3 = frozenset({"3.1", "3.2"})
    assert isolated_labs() == {
        **dict.fromkeys(("4.1", "4.2", "5.1", "5.2", "5.3", "9.1"), lab_3),
        **dict.fromkeys(LAB_7, BEFORE_7),
        **dict.fromkeys(AGENT_LABS, BEFORE_7),
    }
    assert not isolates("node", (20, 20, 2)) and isolates("node", (22, 19, 0)) and isolates("node", (24, 0, 0))
    assert not isolates("bun", (24, 0, 0))


def test_the_reference_modules_pass_every_case_of_their_labs_as_a_students_own(tmp_path: Path) -> None:
    # At chapter 07 (agent-loop.js): the four references stand in for the student's modules of chapters 03, 04 and 06.
    project = copy_project(tmp_path / "reference-as-student")
    shutil.copyfile(JS / "chapter-07" / "agent-loop.js", project / MODULES / "agent-loop.js")
    for name in ("types", "event-stream", "scripted-model", "tool"):
        text = (REFERENCE / f"{name}.mjs").read_text(encoding="utf-8")
        (project / MODULES / f"{name}.js").write_text(text.replace('.mjs";', '.js";'), encoding="utf-8")
    score = graded(project)
    labs = ("3.1", "3.2", *LAB_4, "6.1", "6.2", "6.3", *LAB_7)
    assert {case.case.lab for case in score.cases} >= set(labs)
    assert all(status == "passed" for status in statuses(score, labs).values())


@pytest.mark.parametrize("release", node_params())
def test_a_lab_6_3_bug_changes_no_lab_7_outcome(release: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    # The loop's default executor is the executeToolCall it imports from ./tool.js: the reference's, under isolation.
    ensure_generated()
    with node_on_path(release, monkeypatch):
        buggy = graded(JS / "variants" / "tool-bug-spares-loop")
    assert buggy.lab("6.3").points < 25  # type: ignore[union-attr]
    lab_7 = set(statuses(buggy, LAB_7).values())
    if not isolating(release):
        assert buggy.isolated == {} and "failed" in lab_7  # Node.js 20: the student's executeToolCall runs
        return
    assert buggy.isolated == isolated_labs() and lab_7 == {"passed"}
    assert [buggy.lab(lab).points for lab in LAB_7] == [25] * 5  # type: ignore[union-attr]


def _never_emits(root: Path) -> Path:
    """push() delivers nothing (tests/support/grading_batch.py's never-emits): every lab 3.2 stream stays silent."""
    patched_copy(root / "never-emits", "event-stream.js", "    if (this.#closed) return;\n    this.#buffer.push(event);", "    return;")
    return root / "never-emits"


@pytest.mark.parametrize("bug", ["result-is-a-copy", "never-emits"])
@pytest.mark.parametrize("release", node_params())
def test_a_lab_3_2_bug_changes_no_lab_4_outcome(release: str | None, bug: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ensure_generated()
    project = JS / "variants" / bug if bug != "never-emits" else _never_emits(tmp_path)
    if bug == "never-emits" and release is None:
        pytest.skip("without isolation every lab 4 stream is silent too: that is the grading batch's (tests/farm)")
    with node_on_path(release, monkeypatch):
        correct, buggy = graded(JS / "course-correct"), graded(project)
    assert buggy.lab("3.2").points < 25  # type: ignore[union-attr]
    if not isolating(release):
        # Node.js 20: no isolation; the bug fails lab 4 cases, which attribution excuses (lab 4 keeps its points).
        assert buggy.isolated == {} and statuses(buggy, LAB_4) != statuses(correct, LAB_4)
        assert all(buggy.lab(lab).points == 25 for lab in LAB_4)  # type: ignore[union-attr]
        return
    assert buggy.isolated == isolated_labs()
    assert statuses(buggy, LAB_4) == statuses(correct, LAB_4) and set(statuses(buggy, LAB_4).values()) == {"passed"}
    assert all(graded_case.inherited is None for graded_case in buggy.cases)
    assert [buggy.lab(lab).points for lab in LAB_4] == [25, 25]  # type: ignore[union-attr]


LAB_5 = ("5.1", "5.2", "5.3")


@pytest.mark.parametrize("release", node_params())
def test_a_lab_3_1_bug_changes_no_lab_5_outcome(release: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # sections-before-content breaks systemMessageText, which the provider adapter's currentSystemPrompt uses (PROV-MSG-1).
    ensure_generated()
    project = shutil.copytree(JS / "variants" / "sections-before-content", tmp_path / "sections-before-content")
    shutil.copy(JS / "chapter-05" / "provider-adapter.js", project / MODULES / "provider-adapter.js")
    with node_on_path(release, monkeypatch):
        correct, buggy = graded(JS / "variants" / "chapter-05"), graded(project)
    assert buggy.lab("3.1").points < 25  # type: ignore[union-attr]
    if not isolating(release):
        # Node.js 20: the student's own types.js folds the system prompt, so lab 5.1's folding cases fail too.
        assert buggy.isolated == {} and statuses(buggy, LAB_5)["prov-msg-course-system-fold"] == "failed"
        return
    assert buggy.isolated == isolated_labs()
    assert statuses(buggy, LAB_5) == statuses(correct, LAB_5) and set(statuses(buggy, LAB_5).values()) == {"passed"}
    assert [buggy.lab(lab).points for lab in LAB_5] == [25, 25, 25]  # type: ignore[union-attr]


@pytest.mark.parametrize("release", node_params())
def test_the_redirect_cannot_be_bypassed(release: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another query, a hash, a file URL, import.meta.resolve, a symlink, percent-encoding, a helper, require, own hooks."""
    project = make_bypass_project(tmp_path / "bypass")
    with node_on_path(release, monkeypatch):
        score = graded(project)
    lab_4 = set(statuses(score, LAB_4).values())
    if isolating(release):
        assert lab_4 == {"passed"}, "some attempt reached the student's own event-stream.js"
    else:
        # Without isolation the first attempt hands the drill its own buggy stream: the drill can fail.
        assert "failed" in lab_4


@pytest.mark.parametrize("release", node_params())
def test_lab_3_code_cannot_enter_the_isolation_context(release: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_forging_project(tmp_path / "forging")
    with node_on_path(release, monkeypatch):
        score = graded(project)
    assert "passed" not in set(statuses(score, ("3.2",)).values()), "lab 3.2 passed on the reference's code"


def _agent_over_broken_types(root: Path) -> Path:
    """Chapter 09 whose types.js throws as it loads; its agent.js imports it (userMessage and more, as the course's does)."""
    project = shutil.copytree(JS / "variants" / "chapter-09", root / "broken-types")
    types = project / MODULES / "types.js"
    types.write_text('throw new Error("types.js is broken");\n' + types.read_text(encoding="utf-8"), encoding="utf-8")
    assert 'from "./types.js";' in (project / MODULES / "agent.js").read_text(encoding="utf-8")
    return project


@pytest.mark.parametrize("release", node_params())
def test_the_reducer_plays_over_the_reference_types(release: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # agent.js's import of its own broken types.js: the reference's where isolation holds, else the import fails (skipped).
    ensure_generated()
    project = _agent_over_broken_types(tmp_path)
    with node_on_path(release, monkeypatch):
        score = graded(project)
    reducer = set(statuses(score, ("9.1",)).values())
    assert set(statuses(score, ("3.1",)).values()) == {"skipped"}
    assert reducer == ({"passed"} if isolating(release) else {"skipped"})
    assert score.lab("9.1").points == (25 if isolating(release) else 0)  # type: ignore[union-attr]


def _agent_outcomes(project: Path, operations: set[str], suite: Suite) -> dict[str, Outcome]:
    """Every case of ``operations`` through the course adapter, except those chapter 09 supersedes (as grading leaves them out)."""
    clauses = load_clauses()
    superseded = {clause for clause, entry in clauses.items() if entry.superseded_at == "09"}
    adapter = pi_course_adapter(str(project), ImplSettings(build=False))
    try:
        return {
            case.id: run_alone(adapter, case) for case in suite.cases if case.operation in operations and not superseded & set(case.clauses)
        }
    finally:
        adapter.close()


@pytest.mark.parametrize("release", node_params())
def test_a_chapter_07_loop_under_the_agent_loses_lab_9_cases_with_and_without_isolation(
    release: str | None, suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # loop-bug-spares-agent: a correct Agent over chapter 07's agent-loop.js (no queues; a model throw rejects).
    ensure_generated()
    with node_on_path(release, monkeypatch):
        outcomes = _agent_outcomes(JS / "variants" / "loop-bug-spares-agent", {"run_agent"}, suite)
    failed = sorted(case for case, outcome in outcomes.items() if outcome.status != "passed")
    assert len(outcomes) == sum(case.operation == "run_agent" for case in suite.cases)
    # The student's chapter 07 loop plays under the Agent on every Node.js: it has no queues, which are lab 9.5 code.
    assert "agent-course-steering-after-text-stop" in failed


def test_the_reference_loop_passes_every_loop_and_agent_case_as_a_students_own(tmp_path: Path, suite: Suite) -> None:
    # The five references as a chapter 09 project's own modules (their imports renamed), played without isolation:
    # reference/agent-loop.mjs under the project's Agent, over the reference tool.mjs it imports from.
    ensure_generated()
    project = shutil.copytree(JS / "variants" / "chapter-09", tmp_path / "reference-loop")
    for name in ("types", "event-stream", "scripted-model", "tool", "agent-loop"):
        text = (REFERENCE / f"{name}.mjs").read_text(encoding="utf-8")
        (project / MODULES / f"{name}.js").write_text(text.replace('.mjs";', '.js";'), encoding="utf-8")
    outcomes = _agent_outcomes(project, {"run_agent_loop", "run_agent"}, suite)
    assert {case.operation for case in suite.cases if case.id in outcomes} == {"run_agent_loop", "run_agent"}
    assert {case: outcome.message for case, outcome in outcomes.items() if outcome.status != "passed"} == {}
