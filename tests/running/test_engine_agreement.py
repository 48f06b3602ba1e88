"""``run``, ``grade`` and ``matrix`` run cases through one engine: the same status for every case.

Before the engine, only ``grade`` retried the cases a transport had given up on, so a course
project whose ``textOf`` loops on assistant messages failed more cases under ``run`` than under
``grade``. These tests run a hanging and a crashing project through all three commands and
compare the status of every case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import toolchain
from conformance.adapters.kinds import parse_impl
from conformance.adapters.settings import ImplSettings
from conformance.commands.matrix import run_implementation
from conformance.grading.chapter_scope import scope_of, scoped
from conformance.grading.grader import GradeOptions, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.model.profiles import DEFAULT_PROFILE
from tests.support.build_rules import counting_toolchain
from tests.support.cli_runner import cli
from tests.support.grading_batch import patched_copy
from tests.support.requirements import needs_node

pytestmark = needs_node

#: The project's bug, as a patch to one compiled module of course-correct (see tests/support/grading_batch.py).
VARIANTS = {
    # every assistant message loops forever: timeouts, a restart, then the transport gives up on text_of
    "hangs-in-textof": (
        "types.js",
        "export function textOf(message) {\n",
        'export function textOf(message) {\n  if (message.role === "assistant") for (;;) {}\n',
    ),
    # the process exits when scripted-model.js is imported: every ScriptedModel case crashes it
    "crashes-on-import": ("scripted-model.js", "export const EXHAUSTED_MESSAGE", "process.exit(3);\nexport const EXHAUSTED_MESSAGE"),
}

# Neither a sandbox nor cgroups: what is compared is how cases are run, and this keeps the
# comparison apart from the machine's cgroup hierarchy (shared with whatever else runs here).
OPTIONS = ("--sandbox", "none", "--no-limits")
SETTINGS = ImplSettings(sandbox="none", limits=False)


def statuses_of_run(impl: str, report: Path) -> dict[str, str]:
    result = cli("run", "--impl", impl, *OPTIONS, "--report-json", str(report))
    assert result.returncode in (0, 1), result.stdout[-2000:] + result.stderr[-2000:]
    return {case["id"]: case["status"] for case in json.loads(report.read_text(encoding="utf-8"))["cases"]}


def statuses_of_grade(impl: str) -> dict[str, str]:
    context = prepare(load_rubric(None, DEFAULT_PROFILE))
    result = grade_submission(impl, context, GradeOptions(settings=SETTINGS, build=False))
    return {graded.case.id: graded.outcome.status for graded in result.score.cases}


def statuses_of_matrix(impl: str) -> dict[str, str]:
    # The cases grade runs: those of the chapters the project has reached (chapter 04 here).
    context, _ = scoped(prepare(load_rubric(None, DEFAULT_PROFILE)), scope_of(parse_impl(impl)))
    _, outcomes = run_implementation(parse_impl(impl), list(context.cases), SETTINGS, None, DEFAULT_PROFILE)
    return {outcome.case_id: outcome.status for outcome in outcomes}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_run_grade_and_matrix_give_every_case_the_same_status(tmp_path: Path, variant: str) -> None:
    project = tmp_path / variant
    patched_copy(project, *VARIANTS[variant])
    impl = f"pi-course:{project}"
    by_run = statuses_of_run(impl, tmp_path / "run.json")
    by_grade = statuses_of_grade(impl)
    by_matrix = statuses_of_matrix(impl)
    assert set(by_grade) == set(by_matrix) and set(by_grade) <= set(by_run)
    assert any(status != "passed" for status in by_grade.values())  # the bug shows: the comparison means something
    differ = {
        case: (by_run[case], by_grade[case], by_matrix[case]) for case in by_grade if not by_run[case] == by_grade[case] == by_matrix[case]
    }
    assert differ == {}


def test_run_builds_once_and_retries_in_the_built_copy(tmp_path: Path) -> None:
    """``run --build``: the retries of given-up cases run the copy built before the first case, not a new build each."""
    project = tmp_path / "hangs-in-textof"
    patched_copy(project, *VARIANTS["hangs-in-textof"])
    builds = tmp_path / "builds.log"
    # The grader's own tsc runs once per build: a stand-in that counts (the compiled modules stay as they are).
    tools = counting_toolchain(tmp_path / "toolchain", builds)
    (project / "packages" / "pi-course" / "src").mkdir()
    (project / "packages" / "pi-course" / "src" / "types.ts").write_text("export {};\n", encoding="utf-8")
    report = tmp_path / "run.json"
    env = {toolchain.ENV_VAR: str(tools)}
    result = cli("run", "--impl", f"pi-course:{project}", *OPTIONS, "--build", "--lab", "3.1", "--report-json", str(report), env=env)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
    assert any(case["status"] == "failed" for case in cases) and any(case["status"] == "passed" for case in cases)
    assert builds.read_text(encoding="utf-8") == "B"  # one build
