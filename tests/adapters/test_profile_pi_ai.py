"""Profile pi-ai-1: the upstream package passes every case, and each profile's implementations fail the other's plainly.

The package is installed from npm into ``.cache/pi-ai-1.6.0`` once (or taken from
``PI_AI_PACKAGE_DIR``); without Node.js, npm or a reachable registry the tests that need it
are skipped with the reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conformance.adapters.pi_ai import PiAiLayoutError, pi_ai_adapter
from conformance.adapters.reference import create as reference_adapter
from conformance.adapters.settings import ImplSettings
from conformance.loading.loader import Suite, load_suite
from conformance.model.clauses import load_profile_clauses
from conformance.model.profiles import PI_AI_1, get_profile
from conformance.running.engine import run_alone
from tests.support.cli_runner import cli
from tests.support.handshake_program import HANDSHAKE_PROGRAM
from tests.support.paths import REPO
from tests.support.pi_ai_package import VERSION, install_pi_ai
from tests.support.requirements import needs_node, needs_npm

# Per area: the cases issue 13 asked for, at least 120 in all.
MINIMUM_PER_AREA = {"messages": 25, "system-replay": 25, "event-streams": 20, "faux-provider": 35}


@pytest.fixture(scope="module")
def pi_ai_package() -> Path:
    return install_pi_ai()


@pytest.fixture(scope="module")
def pi_ai_suite() -> Suite:
    return load_suite(profile="pi-ai-1")


def test_profiles_load_separately(suite: Suite, pi_ai_suite: Suite) -> None:
    assert not pi_ai_suite.broken, pi_ai_suite.problems
    assert all(case.profile == "course" for case in suite.cases)
    own = [case for case in pi_ai_suite.cases if not case.file.startswith("fixtures/shared/")]
    assert all(case.profile == "pi-ai-1" for case in pi_ai_suite.cases) and all(case.id.startswith("pa-") for case in own)
    # Only the cases of fixtures/shared/ belong to both profiles, loaded from one place.
    course_places = {case.id: case.location for case in suite.cases}
    assert all(course_places.get(case.id) in (None, case.location) for case in pi_ai_suite.cases)
    assert not {case.id for case in suite.cases} & {case.id for case in own}
    clauses = load_profile_clauses("pi-ai-1")
    assert clauses and all(clause_id.startswith("PA-") for clause_id in clauses)
    for clause in clauses.values():
        assert f"[pi-ai {VERSION} `dist/" in clause.text, f"{clause.id} cites no upstream file and version"


def test_every_area_is_a_feature_with_enough_cases(pi_ai_suite: Suite) -> None:
    per_area = Counter(case.features[0] for case in pi_ai_suite.cases)
    assert set(per_area) == set(PI_AI_1.features)
    assert all(set(case.features) <= set(PI_AI_1.opt_outs) for case in pi_ai_suite.cases)
    # Every function feature has cases, and each case names at most one function.
    per_function = Counter(name for case in pi_ai_suite.cases for name in case.features if name in PI_AI_1.functions)
    assert set(per_function) == set(PI_AI_1.functions), per_function
    assert all(len(set(case.features) & set(PI_AI_1.functions)) <= 1 for case in pi_ai_suite.cases)
    assert all(per_area[area] >= minimum for area, minimum in MINIMUM_PER_AREA.items()), per_area
    assert sum(per_area.values()) >= 120


@needs_node
@needs_npm
def test_the_upstream_package_passes_every_case(pi_ai_package: Path, pi_ai_suite: Suite) -> None:
    adapter = pi_ai_adapter(str(pi_ai_package), ImplSettings())
    try:
        outcomes = [run_alone(adapter, case) for case in pi_ai_suite.cases]
        assert adapter.profile == "pi-ai-1" and adapter.version == VERSION
    finally:
        adapter.close()
    failures = [f"{outcome.case_id}: {outcome.status}: {outcome.message}" for outcome in outcomes if outcome.status != "passed"]
    assert not failures, "\n".join(failures)


def test_the_course_reference_on_pi_ai_cases_fails_naming_the_profiles(pi_ai_suite: Suite) -> None:
    adapter = reference_adapter()
    outcomes = [run_alone(adapter, case) for case in pi_ai_suite.cases]
    assert {outcome.status for outcome in outcomes} == {"failed"}
    for outcome in outcomes:
        assert outcome.message.startswith("profile mismatch: reference implements profile 'course'"), outcome.message
        assert "belongs to profile 'pi-ai-1'" in outcome.message


@needs_node
@needs_npm
def test_the_upstream_package_on_course_cases_fails_naming_the_profiles(pi_ai_package: Path, suite: Suite) -> None:
    adapter = pi_ai_adapter(str(pi_ai_package), ImplSettings())
    try:
        outcomes = [run_alone(adapter, case) for case in suite.cases[:40]]
    finally:
        adapter.close()
    assert {outcome.status for outcome in outcomes} == {"failed"}
    for outcome in outcomes:
        assert "implements profile 'pi-ai-1', but this case belongs to profile 'course'" in outcome.message, outcome.message


@needs_node
def test_the_course_project_states_its_profile_in_the_handshake(pi_ai_suite: Suite) -> None:
    from conformance.adapters.pi_course import pi_course_adapter

    adapter = pi_course_adapter(str(REPO / "tests" / "support" / "js" / "course-correct"), ImplSettings())
    try:
        outcome = run_alone(adapter, pi_ai_suite.cases[0])
    finally:
        adapter.close()
    assert adapter.profile == "course"
    assert outcome.status == "failed" and outcome.message.startswith("profile mismatch: @pi/course implements profile 'course'")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return cli(*args)


@needs_node
@needs_npm
def test_run_profile_pi_ai_names_the_profile(pi_ai_package: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run_cli("run", "--profile", "pi-ai-1", "--impl", f"pi-ai:{pi_ai_package}", "--report-json", str(report))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "pi-conformance: @earendil-works/pi-ai (profile pi-ai-1)" in result.stdout
    for area in PI_AI_1.features:
        assert f"area {area}" in result.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["profile"] == "pi-ai-1" and data["summary"]["passed"] == data["summary"]["total"] >= 120


def test_run_rejects_an_unknown_profile() -> None:
    result = run_cli("run", "--profile", "pi-ai-9")
    assert result.returncode != 0
    assert "unknown profile 'pi-ai-9'" in result.stdout + result.stderr


def test_a_bad_pi_ai_path_says_what_it_looked_for(tmp_path: Path) -> None:
    with pytest.raises(PiAiLayoutError, match="holds no @earendil-works/pi-ai"):
        pi_ai_adapter(str(tmp_path), ImplSettings())


def write_fixture(root: Path, name: str, text: str) -> None:
    (root / "pi-ai-1").mkdir(parents=True, exist_ok=True)
    (root / "pi-ai-1" / name).write_text(text, encoding="utf-8")


PA_HEADER = "# yaml-language-server: $schema=../../spec/schemas/pi-ai-1-fixture-file.schema.json\n"


def test_pi_ai_files_are_checked_against_their_own_clauses_and_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_fixture(
        tmp_path,
        "bad.yaml",
        PA_HEADER
        + "profile: pi-ai-1\ntopic: t\ncases:\n"
        + "  - id: pa-uses-a-course-clause\n    features: [messages]\n    clauses: [PA-TEXT-9]\n    description: d\n"
        + "    operation: content_text\n    input: {content: x}\n    expect: {value: x}\n"
        + "  - id: pa-has-a-lab\n    lab: '3.1'\n    features: [messages]\n    clauses: [PA-TEXT-1]\n    description: d\n"
        + "    operation: content_text\n    input: {content: y}\n    expect: {value: y}\n",
    )
    (tmp_path / "odd.yaml").write_text(PA_HEADER + "profile: pi-ai-7\ntopic: t\ncases: []\n", encoding="utf-8")
    loaded = load_suite(tmp_path, profile="pi-ai-1")
    problems = "\n".join(loaded.problems)
    assert "unknown clause id 'PA-TEXT-9' (not in spec/pi-ai-1/spec.md)" in problems
    assert "pa-has-a-lab" in problems and "'lab'" in problems
    assert "unknown profile 'pi-ai-7'" in "\n".join(load_suite(tmp_path).problems)
    from conformance import cli

    assert cli.main(["fixtures", "lint", "--fixtures", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "PA-TEXT-9" in out and "pi-ai-7" in out


def test_profile_names_are_checked() -> None:
    assert get_profile("course").spec == "spec/spec.md"
    with pytest.raises(ValueError, match="known profiles: course, pi-ai-1"):
        get_profile("upstream")


def test_a_python_port_plugs_in_through_the_binding_hooks(pi_ai_suite: Suite, suite: Suite) -> None:
    from tests.support.pi_ai_port import ADAPTER

    outcomes = {case.id: run_alone(ADAPTER, case) for case in pi_ai_suite.cases}
    areas = {case.id: case.features[0] for case in pi_ai_suite.cases}
    by_area: dict[str, Counter[str]] = {}
    for case_id, outcome in outcomes.items():
        by_area.setdefault(areas[case_id], Counter())[outcome.status] += 1
    # The port has text projection and replay; what it does not bind is skipped, naming what is missing.
    assert by_area["system-replay"] == Counter(passed=by_area["system-replay"].total())
    assert by_area["messages"]["passed"] >= 20 and by_area["messages"]["failed"] == 0
    assert set(by_area["faux-provider"]) == {"skipped"} and set(by_area["event-streams"]) == {"skipped"}
    skipped = next(outcome for outcome in outcomes.values() if outcome.status == "skipped")
    assert skipped.message.startswith("not implemented: ")
    # Against the course profile it fails plainly.
    course_outcome = run_alone(ADAPTER, suite.cases[0])
    assert course_outcome.status == "failed" and "implements profile 'pi-ai-1'" in course_outcome.message


def test_the_handshake_carries_the_profile_both_ways(tmp_path: Path, pi_ai_suite: Suite) -> None:
    from conformance.adapters.process import ProcessAdapter
    from conformance.adapters.process_options import ProcessOptions

    program = tmp_path / "course_only.py"
    program.write_text(HANDSHAKE_PROGRAM, encoding="utf-8")
    adapter = ProcessAdapter(ProcessOptions([sys.executable, str(program)]))
    adapter.requested_profile = "pi-ai-1"
    try:
        outcome = run_alone(adapter, pi_ai_suite.cases[0])
    finally:
        adapter.close()
    # The runner said which profile it checks; the program said which one it implements.
    assert adapter.name == "saw-pi-ai-1" and adapter.profile == "course"
    assert outcome.status == "failed"
    expected = "profile mismatch: saw-pi-ai-1 implements profile 'course', but this case belongs to profile 'pi-ai-1'"
    assert outcome.message.startswith(expected)
