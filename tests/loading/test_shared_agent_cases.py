"""Agent cases shared by the course and pi-agent-core-1 (fixtures/shared/agent-*.yaml): one scenario, each profile's operation."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.authoring.coverage import compute
from conformance.authoring.lint import lint
from conformance.authoring.regen import regenerate
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.model.clauses import load_profile_clauses
from conformance.yamlio import safe as yamlsafe
from tests.support.agent_scenarios import scenario_differences
from tests.support.cli_runner import cli
from tests.support.scratch_cases import shared_scratch

PROFILE = "pi-agent-core-1"

SHARED = """\
profile: [course, pi-agent-core-1]
topic: shared agent scratch
course: {chapter: "07"}
cases:
  - id: scratch-shared-text-turn
    clauses: [LOOP-END-1, PAC-LOOP-1]
    description: A text turn ends the run.
    course:
      lab: "7.1"
      operation: run_agent_loop
      input:
        context: {messages: [&u {role: user, content: [{type: text, text: hi}], timestamp: 1}]}
        model:
          turns:
            - message:
                {role: assistant, content: &hello [{type: text, text: hello}], provider: scripted, model: scripted-v1,
                 usage: {input: 0, output: 0, totalTokens: 0}, stopReason: stop, timestamp: 2}
      expect: {result: {reason: stop, steps: 1, messages: [*u, {$type: object}]}}
    pi-agent-core-1:
      features: [loop]
      operation: agent_loop
      input:
        prompts: [*u]
        context: {messages: []}
        model:
          turns:
            - message:
                role: assistant
                content: *hello
                api: scripted
                provider: scripted
                model: scripted-v1
                usage:
                  {input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
                   cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0}}
                stopReason: stop
                timestamp: 2
      expect:
        trace: [agent_start, turn_start, message_start:user, message_end:user, message_start:assistant,
                message_update:text_start, message_update:text_delta, message_update:text_end, message_end:assistant,
                turn_end, agent_end]
"""


def scratch(tmp_path: Path, text: str = SHARED) -> Path:
    return shared_scratch(tmp_path, text, "agent.yaml")


def test_a_shared_agent_case_loads_with_each_profiles_operation_and_clauses(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    course, upstream = load_suite(root), load_suite(root, profile=PROFILE)
    assert not course.broken and not upstream.broken, [case.problems for case in (*course.broken, *upstream.broken)]
    [in_course], [in_upstream] = course.cases, upstream.cases
    assert (in_course.id, in_course.operation, in_course.clauses, in_course.lab) == (
        "scratch-shared-text-turn",
        "run_agent_loop",
        ("LOOP-END-1",),
        "7.1",
    )
    assert (in_upstream.id, in_upstream.operation, in_upstream.clauses, in_upstream.lab) == (
        "scratch-shared-text-turn",
        "agent_loop",
        ("PAC-LOOP-1",),
        "loop",
    )
    problems = [str(problem) for problem in lint(root) if "shared/agent.yaml" in problem.file]
    assert problems == [], problems  # no duplicate id across the two profiles, no operation problem
    for profile, clause in (("course", "LOOP-END-1"), (PROFILE, "PAC-LOOP-1")):
        table = compute(load_profile_clauses(profile), load_suite(root, profile=profile).cases, "0")
        assert next(row for row in table.rows if row.id == clause).cases == ("scratch-shared-text-turn",)


def test_a_case_names_its_operation_once_shared_or_in_every_block(tmp_path: Path) -> None:
    one_block = SHARED.replace("      operation: agent_loop\n", "")
    [broken] = load_suite(scratch(tmp_path / "one", one_block), profile=PROFILE).broken
    assert any("names none: name one in each profile's block" in problem for problem in broken.problems), broken.problems
    both = SHARED.replace("    course:\n", "    operation: event_stream\n    course:\n", 1)
    [broken] = load_suite(scratch(tmp_path / "both", both)).broken
    assert any("a profile's block cannot name another" in problem for problem in broken.problems), broken.problems


def test_a_view_that_breaks_its_own_schema_is_reported_in_the_shared_file(tmp_path: Path) -> None:
    root = scratch(tmp_path, SHARED.replace("prompts: [*u]", "prompt: [*u]"))
    assert not load_suite(root).broken  # the course's view is fine
    [broken] = load_suite(root, profile=PROFILE).broken
    assert any(
        problem.startswith('["pi-agent-core-1"].input') and problem.endswith(f"(profile {PROFILE})") for problem in broken.problems
    ), broken.problems


def _shared_agent_cases() -> list[tuple[Case, Case]]:
    course = {case.id: case for case in load_suite().cases if case.file.startswith("fixtures/shared/agent-")}
    upstream = {case.id: case for case in load_suite(profile=PROFILE).cases if case.file.startswith("fixtures/shared/agent-")}
    assert course and course.keys() == upstream.keys()
    return [(course[case_id], upstream[case_id]) for case_id in course]


def test_the_bundled_shared_agent_cases_are_one_scenario_in_both_views() -> None:
    for course, upstream in _shared_agent_cases():
        assert course.operation in ("run_agent_loop", "run_agent") and upstream.operation in ("agent_loop", "agent")
        where = f"{course.location}: {course.id}"
        assert scenario_differences(_as_view(course), _as_view(upstream)) == [], where


def test_the_scenario_check_has_teeth() -> None:
    """Each rule catches a view changed in that one respect (a broken variant of a bundled case)."""
    course, upstream = _shared_agent_cases()[0]
    breaks: dict[str, Callable[[dict[str, Any]], object]] = {
        "model turns": lambda view: view["input"]["model"]["turns"].pop(),
        "transcript in": lambda view: view["input"]["prompts"].append({"role": "user", "content": "more", "timestamp": 9}),
        "tools and gates": lambda view: view["input"]["tools"].reverse(),
        "order of release": lambda view: view["input"]["steps"].reverse(),
        "trace": lambda view: view["expect"]["trace"].reverse(),
        "tool results": lambda view: view["expect"]["result"].reverse(),
    }
    for rule, change in breaks.items():
        broken = copy.deepcopy(_as_view(upstream))
        change(broken)
        assert any(found.startswith(rule) for found in scenario_differences(_as_view(course), broken)), rule


def _as_view(case: Case) -> dict[str, Any]:
    return {"input": copy.deepcopy(case.input), "expect": copy.deepcopy(case.expect)}


def test_fixtures_new_scaffolds_a_shared_agent_case_with_one_operation_per_profile(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    options = ("fixtures", "new", "--fixtures", str(root), "--profile", f"course,{PROFILE}", "--lab", "7.1")
    result = cli(*options, "--operation", "run_agent_loop", "--operation", "agent_loop", "--slug", "two", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "shared/agent.yaml" in result.stdout  # the file of these two profiles that holds the operations
    data: Any = yamlsafe.load((root / "shared" / "agent.yaml").read_text(encoding="utf-8"))
    added = data["cases"][-1]
    assert "operation" not in added and (added["course"]["operation"], added[PROFILE]["operation"]) == ("run_agent_loop", "agent_loop")
    assert "input" in added["course"] and "input" in added[PROFILE] and "input" not in added
    # Its placeholders, not its form, keep it from running: each view is broken by TODOs only.
    for profile in ("course", PROFILE):
        broken = {case.id: case for case in load_suite(root, profile=profile).broken}
        assert set(broken) == {added["id"]}
        assert not any("shared operation" in problem or "name one in each" in problem for problem in broken[added["id"]].problems)
    wrong = cli(*options, "--operation", "run_agent_loop", timeout=120)
    assert wrong.returncode == 2 and "one --operation per profile" in wrong.stderr, wrong.stderr
    too_many = cli(*options, "--operation", "run_agent_loop", "--operation", "agent_loop", "--operation", "agent", timeout=120)
    assert too_many.returncode == 2 and "one per profile (course, pi-agent-core-1); got 3" in too_many.stderr, too_many.stderr


def test_regen_rewrites_the_expectations_in_the_profiles_own_block(tmp_path: Path) -> None:
    root = scratch(tmp_path, SHARED.replace("steps: 1,", "steps: 5,"))
    result = regenerate(["scratch-shared-text-turn"], root, profile="course")
    assert not result.refused, result.refused
    removed = [line for line in result.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in result.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert len(removed) == len(added) == 1 and "steps: 5" in removed[0] and "steps: 1" in added[0], result.diff
    assert removed[0].startswith("-      expect:")  # the course block's expect, six spaces in
