"""pi-course: the project's JavaScript course implementation passes, and each broken variant fails right.

tests/support/js/variants.json says, for every folder under tests/support/js, which case must fail with
which message and, per lab, how many cases at least fail or are skipped (every other case
passes; lab sizes come from the fixtures).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.adapters.course_chapters import detect_chapter
from conformance.adapters.pi_course import modules_dir, pi_course_adapter
from conformance.adapters.settings import ImplSettings
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.model.clauses import load_clauses
from conformance.running.engine import run_alone
from tests.support.js_variants import JS
from tests.support.paths import REPO
from tests.support.requirements import needs_node
from tests.support.variant_expectations import EXPECTATIONS, expected_outcomes, outcome_problems

NODE = shutil.which("node")
pytestmark = needs_node


#: The chapters the pi-course adapter plays: of chapter 09 both the reducer (lab 9.1) and the Agent (labs 9.2-9.5).
PLAYED_CHAPTERS = ("03", "04", "05", "06", "07", "09")
#: The course profile's chapters it does not play yet: their cases are skipped, never charged.
NOT_PLAYED_CHAPTERS: tuple[str, ...] = ()
#: What the adapter plays of chapter 09, per lab: the reducer's operation and the Agent's.
PLAYED_OF_CHAPTER_09 = {("9.1", "reduce_agent_state"), *((lab, "run_agent") for lab in ("9.2", "9.3", "9.4", "9.5"))}
CLAUSES = load_clauses()


def _superseded(case: Case, chapter: str) -> bool:
    """Whether ``case`` cites a clause a chapter up to ``chapter`` supersedes (grading leaves it out there too)."""
    return any((at := CLAUSES[clause].superseded_at) is not None and at <= chapter for clause in case.clauses if clause in CLAUSES)


def grade(folder: str, suite: Suite, build: bool = False) -> dict[str, Outcome]:
    """The folder's outcomes on the chapters it has reached, as ``grade`` chooses them (course-correct is at chapter 04).

    As ``grade`` does (conformance/grading/chapter_scope.py), a case whose clause the folder's chapter supersedes is
    left out: chapter 09's loop catches the model's throw that chapter 07's LOOP-TURN-2 case expects to reject.
    """
    scope = detect_chapter(JS / folder)
    adapter = pi_course_adapter(str(JS / folder), ImplSettings(build=build))
    try:
        return {
            case.id: run_alone(adapter, case)
            for case in suite.cases
            if case.chapter <= scope.chapter and case.chapter in PLAYED_CHAPTERS and not _superseded(case, scope.chapter)
        }
    finally:
        adapter.close()


@pytest.mark.parametrize("folder", [name for name, spec in EXPECTATIONS.items() if not spec.get("build_fails")])
def test_folder_gets_exactly_its_expected_results(folder: str, suite: Suite) -> None:
    # Graded here, not in a shared fixture: pytest-xdist spreads the folders over its workers,
    # where a module fixture would grade every folder again on each worker that runs one.
    spec = EXPECTATIONS[folder]
    results = grade(folder, suite)
    assert outcome_problems(expected_outcomes(spec), results, suite) == []
    if "failing_case" in spec:
        outcome = results[str(spec["failing_case"])]
        assert outcome.status == "failed"
        assert str(spec["message_fragment"]) in outcome.message
    for fragment in spec.get("skipped_messages", []):  # type: ignore[attr-defined]
        assert any(fragment in outcome.message for outcome in results.values() if outcome.status == "skipped")


def test_every_chapter_of_the_profile_is_played_or_named_as_not_yet(suite: Suite) -> None:
    # A chapter added to the fixtures but to neither list would go unchecked here.
    assert {case.chapter for case in suite.cases} == set(PLAYED_CHAPTERS) | set(NOT_PLAYED_CHAPTERS)
    reached = {detect_chapter(JS / folder).chapter for folder in EXPECTATIONS if not EXPECTATIONS[folder].get("build_fails")}
    assert reached == {"04", "05", "06", "07", "09"}


def test_chapter_09_plays_the_reducer_and_the_agent(suite: Suite) -> None:
    # A new operation of chapter 09 must be added to the set, and so to the folders' expectations.
    assert {(case.lab, case.operation) for case in suite.cases if case.chapter == "09"} == PLAYED_OF_CHAPTER_09


@pytest.mark.parametrize(
    ("folder", "offered"),
    [("variants/chapter-09", True), ("variants/agent-starter", False), ("variants/chapter-07", False), ("course-correct", False)],
)
def test_the_handshake_offers_run_agent_only_where_agent_js_exports_an_agent(folder: str, offered: bool, suite: Suite) -> None:
    # agent-starter's agent.js has the reducer's placeholder and no Agent: its Agent cases are skipped as not offered.
    adapter = pi_course_adapter(str(JS / folder), ImplSettings(build=False))
    try:
        outcome = run_alone(adapter, next(case for case in suite.cases if case.operation == "run_agent"))
    finally:
        adapter.close()
    assert outcome.status == ("passed" if offered else "skipped")
    assert ("does not support run_agent" in outcome.message) is not offered


def test_a_chapter_04_project_skips_chapter_06_for_want_of_tool_js(suite: Suite) -> None:
    # run (which grades every chapter) skips chapter 06 on a chapter 04 project, naming the missing module and lab.
    adapter = pi_course_adapter(str(JS / "course-correct"), ImplSettings(build=False))
    try:
        outcomes = [run_alone(adapter, case) for case in suite.cases if case.chapter == "06"][::10]
    finally:
        adapter.close()
    assert outcomes and {outcome.status for outcome in outcomes} == {"skipped"}
    assert all("dist/src/tool.js not found (" in outcome.message for outcome in outcomes)


def test_a_chapter_04_project_skips_chapter_05_for_want_of_provider_adapter_js(suite: Suite) -> None:
    # The same for chapter 05: every one of its four operations names the module and the lab it is missing for.
    adapter = pi_course_adapter(str(JS / "course-correct"), ImplSettings(build=False))
    try:
        outcomes = {case.operation: run_alone(adapter, case) for case in suite.cases if case.chapter == "05"}
    finally:
        adapter.close()
    assert set(outcomes) == {"to_provider_messages", "to_provider_tools", "provider_model_stream", "provider_fetch_stream"}
    assert {outcome.status for outcome in outcomes.values()} == {"skipped"}
    assert all("dist/src/provider-adapter.js not found (" in outcome.message for outcome in outcomes.values())


def test_a_chapter_06_project_skips_chapter_07_for_want_of_agent_loop_js(suite: Suite) -> None:
    # run skips chapter 07 on a project without agent-loop.js, naming the missing module and the first lab.
    adapter = pi_course_adapter(str(JS / "variants" / "chapter-06"), ImplSettings(build=False))
    try:
        outcomes = [run_alone(adapter, case) for case in suite.cases if case.chapter == "07"][::10]
    finally:
        adapter.close()
    assert outcomes and {outcome.status for outcome in outcomes} == {"skipped"}
    assert all("dist/src/agent-loop.js not found (runAgentLoop, lab 7.1)" in outcome.message for outcome in outcomes)


def test_the_three_forms_of_path_reach_the_same_modules() -> None:
    repo = JS / "course-correct"
    expected = repo / "packages" / "pi-course" / "dist" / "src"
    assert modules_dir(repo) == expected
    assert modules_dir(repo / "packages" / "pi-course") == expected
    assert modules_dir(expected) == expected


def test_a_failed_build_errors_every_case_with_the_compiler_message(suite: Suite) -> None:
    results = grade("variants/build-fails", suite, build=True)
    assert {outcome.status for outcome in results.values()} == {"errored"}
    message = next(iter(results.values())).message
    assert "the build failed: tsc -p tsconfig.json exited with status 2: src/scripted-model.ts(1,22): error TS2307" in message


def test_a_successful_build_then_passes(suite: Suite) -> None:
    results = grade("course-correct", suite, build=True)
    assert {outcome.status for outcome in results.values()} == {"passed"}


def test_every_variant_is_generated_and_differs_from_the_correct_project() -> None:
    assert NODE is not None
    result = subprocess.run([NODE, str(JS / "make_variants.mjs"), "--check"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    correct = JS / "course-correct" / "packages" / "pi-course"
    for name in (folder.removeprefix("variants/") for folder in EXPECTATIONS if folder.startswith("variants/")):
        variant = JS / "variants" / name / "packages" / "pi-course"
        differing = [
            path.relative_to(variant)
            for path in variant.rglob("*.js*")
            if not (correct / path.relative_to(variant)).is_file()
            or (correct / path.relative_to(variant)).read_bytes() != path.read_bytes()
        ]
        missing = [path for path in correct.rglob("*.js") if not (variant / path.relative_to(correct)).exists()]
        assert differing or missing, f"{name} is identical to course-correct"


def test_unknown_path_is_a_clear_error() -> None:
    from conformance.adapters.pi_course import CourseLayoutError

    with pytest.raises(CourseLayoutError, match="is not a folder"):
        pi_course_adapter(str(Path("/no/such/course")), ImplSettings())


def _fake_node(folder: Path, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    node = folder / "node"
    node.unlink(missing_ok=True)  # a new file: another identity, as when Node.js is upgraded
    node.write_text(f"#!/bin/sh\necho {version}\necho started >> {folder / 'starts'}\n", encoding="utf-8")
    node.chmod(0o755)
    # Its own modification time: a new file may reuse the old one's inode number.
    stamp = {"v16.20.0": 1_600_000_000, "v20.1.0": 1_700_000_000}[version]
    os.utime(node, (stamp, stamp))
    return node


def test_an_old_node_is_refused_and_the_version_is_asked_once_per_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.adapters.pi_course import CourseLayoutError, find_node

    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    _fake_node(tmp_path / "bin", "v16.20.0")
    for _ in range(2):
        with pytest.raises(CourseLayoutError, match=r"needs Node\.js 20\.x or 22\.19\+ .*, found v16\.20\.0$"):
            find_node()
    assert (tmp_path / "bin" / "starts").read_text(encoding="utf-8").count("started") == 1
    upgraded = _fake_node(tmp_path / "bin", "v20.1.0")
    assert find_node() == str(upgraded)
    assert find_node() == str(upgraded)
    assert (tmp_path / "bin" / "starts").read_text(encoding="utf-8").count("started") == 2


def test_a_tool_call_that_never_settles_fails_its_cases_quickly(tmp_path: Path, suite: Suite) -> None:
    # Chapter 06's operations wait as the others do (spec/protocol.md, "Settling"): a pending
    # executeToolCall is answered when the event loop is idle, not after the case's timeout.
    project = tmp_path / "pending"
    shutil.copytree(JS / "variants" / "chapter-06", project)
    tool = project / "packages" / "pi-course" / "dist" / "src" / "tool.js"
    tool.write_text(
        tool.read_text(encoding="utf-8") + "\nexport function executeToolCall() {\n  return new Promise(() => {});\n}\n", encoding="utf-8"
    )
    text = tool.read_text(encoding="utf-8").replace("export async function executeToolCall(", "async function correctExecuteToolCall(")
    tool.write_text(text, encoding="utf-8")
    adapter = pi_course_adapter(str(project), ImplSettings(build=False))
    try:
        outcomes = [run_alone(adapter, case) for case in suite.cases if case.lab == "6.3"][:4]
    finally:
        adapter.close()
    assert {outcome.status for outcome in outcomes} == {"failed"}
    assert all(isinstance(o.observation, dict) and o.observation["error"] == "executeToolCall() never settled" for o in outcomes)
    assert all(outcome.duration_s < 1 for outcome in outcomes)


def test_a_transport_that_never_yields_fails_its_cases_quickly(tmp_path: Path, suite: Suite) -> None:
    # Chapter 05's scenarios wait as the others do: a stream whose next() never settles is observed
    # when the event loop is idle (finished: false), not after the case's timeout.
    project = shutil.copytree(JS / "variants" / "chapter-05", tmp_path / "pending")
    module = project / "packages" / "pi-course" / "dist" / "src" / "provider-adapter.js"
    text = module.read_text(encoding="utf-8").replace("export function createOpenAICompatibleTransport(", "function correctTransport(")
    pending = "() => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) })"
    replacement = f"\nexport function createOpenAICompatibleTransport() {{\n  return {{ stream: {pending} }};\n}}\n"
    module.write_text(text + replacement, encoding="utf-8")
    adapter = pi_course_adapter(str(project), ImplSettings(build=False))
    try:
        outcomes = [run_alone(adapter, case) for case in suite.cases if case.lab == "5.3"][:4]
    finally:
        adapter.close()
    assert {outcome.status for outcome in outcomes} == {"failed"}
    for outcome in outcomes:
        assert isinstance(outcome.observation, dict) and outcome.duration_s < 1
        steps = outcome.observation["steps"]
        assert isinstance(steps, list)
        consumed = [step for step in steps if isinstance(step, dict) and "chunks" in step]
        assert consumed and all(step["finished"] is False and step["chunks"] == [] for step in consumed)
