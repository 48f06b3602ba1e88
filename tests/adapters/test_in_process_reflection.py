"""Student code cannot reach the adapter's seal from inside the adapter's process (issue 32, item 1).

Each cheat is a skeleton (nothing implemented) whose ``types.js`` carries the public answers of
lab 3.1 and gets the power to seal lines: through an inspector session (the attack that scored
99.77/100), a worker thread's ``connectToMainThread()``, the adapter's own channel module, or a
rigged ``Promise.race``. Before the adapter ran under Node.js's permission model with frozen
intrinsics, each of them earned (nearly) all of lab 3.1; now each earns what the skeleton earns,
and every case says why. The drills run on the machine's Node.js and on each release that
``make node-versions`` installed (tests/support/node_versions.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.adapters.pi_course import pi_course_adapter
from conformance.adapters.settings import ImplSettings
from conformance.grading.grader import GradeOptions, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.loading.loader import load_suite
from tests.support.attack_projects import copy_project, empty_project, replace_modules
from tests.support.node_versions import node_on_path, node_params
from tests.support.reflection_attacks import answer_table, channel_importer, grade_lab, inspector_forger, promise_hijacker, worker_forger
from tests.support.requirements import needs_node

pytestmark = needs_node

CHEATS: dict[str, Callable[[str], str]] = {
    "inspector": inspector_forger,
    "worker-inspector": worker_forger,
    "channel-import": channel_importer,
    "rigged-promise": promise_hijacker,
}


@pytest.fixture(scope="module")
def table() -> str:
    """Lab 3.1's public answers, as the cheats carry them."""
    return answer_table([case for case in load_suite().cases if case.lab == "3.1"])


def lab_31(project: Path) -> tuple[float, list[str]]:
    """Lab 3.1's points (graded unsandboxed: the permission model alone must hold) and its messages."""
    return grade_lab(project, "3.1")


@pytest.mark.parametrize("release", node_params())
@pytest.mark.parametrize("cheat", CHEATS)
def test_a_skeleton_with_the_public_answers_earns_what_the_skeleton_earns(
    cheat: str, release: str | None, table: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = empty_project(tmp_path / cheat)
    replace_modules(project, {"types.js": CHEATS[cheat](table)})
    with node_on_path(release, monkeypatch):
        skeleton_points, _ = lab_31(empty_project(tmp_path / "skeleton"))
        points, messages = lab_31(project)
    assert skeleton_points == 0
    assert points == skeleton_points, f"{cheat} earned {points} of lab 3.1"
    assert messages and all(messages), "every case of lab 3.1 says why it earned nothing"


@pytest.mark.parametrize("release", node_params())
def test_the_correct_project_still_earns_every_point_under_the_confinement(
    release: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = prepare(load_rubric(None, "course"))
    options = GradeOptions(settings=ImplSettings(sandbox="none"), build=False)
    with node_on_path(release, monkeypatch):
        result = grade_submission(f"pi-course:{copy_project(tmp_path / 'correct')}", context, options)
    failing = [graded.outcome.message for graded in result.score.cases if graded.outcome.message]
    assert result.score.points == pytest.approx(result.score.max_points) == pytest.approx(100), failing[:3]


#: Tries what the permission model leaves open and lockdown.mjs closes; textOf reports what happened.
PROBES = """
import v8, { getHeapSnapshot, setFlagsFromString } from "node:v8";
const tried = {};
const attempts = {
  getHeapSnapshot: () => getHeapSnapshot(),
  setFlagsFromString: () => setFlagsFromString("--allow-natives-syntax"),
  queryObjects: () => (typeof v8.queryObjects === "function" ? v8.queryObjects(Object) : "absent"),
  globalPromise: () => { globalThis.Promise = class {}; },
  prototype: () => { Array.prototype.includes = () => true; },
};
for (const [name, attempt] of Object.entries(attempts)) {
  try {
    tried[name] = attempt() === "absent" ? "absent" : "allowed";
  } catch (error) {
    tried[name] = String(error.message);
  }
}
export const textOf = () => JSON.stringify(tried);
"""


@pytest.mark.parametrize("release", node_params())
def test_what_the_permission_model_leaves_open_is_closed_before_student_code_loads(
    release: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = empty_project(tmp_path / "probe")
    replace_modules(project, {"types.js": PROBES})
    with node_on_path(release, monkeypatch):
        adapter = pi_course_adapter(str(project), ImplSettings(sandbox="none", build=False))
        try:
            tried = json.loads(str(adapter.perform("text_of", {"message": {"role": "user", "content": "x"}})["value"]))
        finally:
            adapter.close()
    for name in ("getHeapSnapshot", "setFlagsFromString"):
        assert "not available to the code under test" in tried[name], tried
    assert tried["queryObjects"] == "absent" or "not available" in tried["queryObjects"], tried
    assert "read only" in tried["globalPromise"] and "read only" in tried["prototype"], tried
