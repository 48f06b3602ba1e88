"""Cases shared by the course and pi-ai-1 profiles (fixtures/shared/): loading, lint, coverage, runs, authoring."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conformance.authoring.coverage import compute
from conformance.authoring.lint import lint
from conformance.authoring.regen import RegenRefused, regenerate
from conformance.loading.loader import load_suite
from conformance.model.clauses import load_profile_clauses
from conformance.model.profiles import COURSE, PI_AI_1
from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.pi_ai_package import install_pi_ai
from tests.support.requirements import costly, needs_node, needs_npm
from tests.support.scratch_cases import shared_scratch

SHARED = """\
profile: [course, pi-ai-1]
topic: shared scratch
course: {chapter: "03"}
cases:
  - id: scratch-shared-text
    clauses: [SYS-TEXT-1, PA-SYSTEXT-1]
    course: {lab: "3.1"}
    pi-ai-1: {features: [messages]}
    description: Content, then the sections, joined by blank lines.
    operation: system_message_text
    input:
      message: {role: system, content: "A", sections: {s: "B"}, timestamp: 1}
    expect: {value: "A\\n\\nB", input_unchanged: true}
"""


def scratch(tmp_path: Path, text: str = SHARED) -> Path:
    return shared_scratch(tmp_path, text)


def test_a_shared_case_loads_in_each_profile_with_that_profiles_clauses_only(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    course, pi_ai = load_suite(root), load_suite(root, profile="pi-ai-1")
    assert not course.broken and not pi_ai.broken, course.problems + pi_ai.problems
    [in_course], [in_pi_ai] = course.cases, pi_ai.cases
    assert (in_course.id, in_course.clauses, in_course.lab, in_course.chapter) == ("scratch-shared-text", ("SYS-TEXT-1",), "3.1", "03")
    assert (in_pi_ai.id, in_pi_ai.clauses, in_pi_ai.lab, in_pi_ai.features) == (
        "scratch-shared-text",
        ("PA-SYSTEXT-1",),
        "messages",
        ("messages", "get-system-message-text", "system-messages"),  # its area, the upstream function it calls, its input's class
    )
    assert in_course.location == in_pi_ai.location == "fixtures/shared/one.yaml:6"


def test_the_bundled_shared_cases_belong_to_both_profiles() -> None:
    course, pi_ai = load_suite(), load_suite(profile="pi-ai-1")
    shared_pi_ai = {case.id: case for case in pi_ai.cases if case.file.startswith("fixtures/shared/")}
    # The course's shared cases in the files pi-ai-1 shares (the agent files are shared with pi-agent-core-1).
    pi_ai_files = {case.file for case in shared_pi_ai.values()}
    shared_course = {case.id: case for case in course.cases if case.file in pi_ai_files}
    assert shared_course and shared_course.keys() == shared_pi_ai.keys()
    for case_id, case in shared_course.items():
        assert case.lab in ("3.1", "3.2") and all(clause.startswith(COURSE.clause_prefixes) for clause in case.clauses)
        other = shared_pi_ai[case_id]
        assert other.lab in PI_AI_1.features and all(clause.startswith("PA-") for clause in other.clauses)
        assert (case.operation, case.expect) == (other.operation, other.expect)
        # pi-ai-1's own input and steps (upstream-typed) are the same scenario: equal once the
        # fields only one profile's types have are left out.
        assert _common(case.input) == _common(other.input) and _common(list(case.steps)) == _common(list(other.steps))


def _common(value: object) -> object:
    """``value`` without the fields of one profile's types: an assistant message's api, usage's cache and cost, rawArguments."""
    if isinstance(value, list):
        return [_common(item) for item in value]
    if isinstance(value, dict):
        return {key: _common(item) for key, item in value.items() if key not in ("api", "cacheRead", "cacheWrite", "cost", "rawArguments")}
    return value


def test_lint_and_coverage_take_a_shared_case_once_per_profile(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    problems = [str(problem) for problem in lint(root) if "shared/one.yaml" in problem.file]
    assert problems == [], problems  # in particular no "duplicate id" across the two profiles
    for profile, clause in (("course", "SYS-TEXT-1"), ("pi-ai-1", "PA-SYSTEXT-1")):
        table = compute(load_profile_clauses(profile), load_suite(root, profile=profile).cases, "0")
        assert next(row for row in table.rows if row.id == clause).cases == ("scratch-shared-text",)


def test_a_shared_case_that_breaks_one_profiles_schema_is_reported_there_with_file_case_and_path(tmp_path: Path) -> None:
    root = scratch(tmp_path, SHARED.replace("pi-ai-1: {features: [messages]}", "pi-ai-1: {features: [messagez]}"))
    assert not load_suite(root).broken  # the course's view is fine
    [broken] = load_suite(root, profile="pi-ai-1").broken
    assert (broken.id, broken.location) == ("scratch-shared-text", "fixtures/shared/one.yaml:6")
    [problem] = broken.problems
    assert problem.startswith('["pi-ai-1"].features[0]: ') and problem.endswith("(profile pi-ai-1)"), problem
    reported = [str(found) for found in lint(root)]
    # At the line of the misspelt feature, inside the shared case.
    line = next(number for number, text in enumerate((root / "shared" / "one.yaml").read_text().splitlines(), 1) if "messagez" in text)
    assert line > 6
    expected = f'fixtures/shared/one.yaml:{line}: scratch-shared-text: ["pi-ai-1"].features[0]: '
    assert any(found.startswith(expected) for found in reported), reported


def test_a_view_problem_in_the_clauses_points_at_the_shared_index(tmp_path: Path) -> None:
    root = scratch(tmp_path, SHARED.replace("[SYS-TEXT-1, PA-SYSTEXT-1]", "[PA-SYSTEXT-1, SYS-TEXT-1, SYS-TEXT-1]"))
    [broken] = load_suite(root).broken
    assert any(problem.startswith("clauses") for problem in broken.problems), broken.problems


def test_a_shared_case_must_cite_every_profile_and_no_other(tmp_path: Path) -> None:
    root = scratch(tmp_path, SHARED.replace("[SYS-TEXT-1, PA-SYSTEXT-1]", "[SYS-TEXT-1, XX-TEXT-1]"))
    for profile in ("course", "pi-ai-1"):
        [broken] = load_suite(root, profile=profile).broken
        # The stray id is the problem; that pi-ai-1 then has none follows from it.
        assert broken.problems == ("clauses[1]: 'XX-TEXT-1' is a clause of none of this file's profiles (course, pi-ai-1)",)
    # Reported by both profiles' loads, listed once by lint.
    listed = [str(problem) for problem in lint(root) if "XX-TEXT-1" in problem.message]
    assert len(listed) == 1, listed
    root = scratch(tmp_path / "second", SHARED.replace("[SYS-TEXT-1, PA-SYSTEXT-1]", "[SYS-TEXT-1, SYS-PROMPT-1]"))
    [broken] = load_suite(root, profile="pi-ai-1").broken
    assert broken.problems == ("clauses: a shared case cites at least one clause of each of its profiles; none of pi-ai-1 (PA-)",)


def run_profile(root: Path, tmp_path: Path, *options: str) -> dict[str, object]:
    report = tmp_path / "report.json"
    result = cli("run", "--fixtures", str(root), "--report-json", str(report), *options)
    assert result.returncode == 0, result.stdout + result.stderr
    document: dict[str, object] = json.loads(report.read_text(encoding="utf-8"))
    return document


def test_a_shared_case_runs_in_the_course_with_its_clauses(tmp_path: Path) -> None:
    cases = run_profile(scratch(tmp_path), tmp_path)["cases"]
    assert isinstance(cases, list)
    [case] = cases
    assert (case["id"], case["status"], case["clauses"], case["lab"]) == ("scratch-shared-text", "passed", ["SYS-TEXT-1"], "3.1")


@needs_node
@needs_npm
def test_a_shared_case_runs_in_pi_ai_1_with_its_clauses(tmp_path: Path) -> None:
    package = install_pi_ai()
    cases = run_profile(scratch(tmp_path), tmp_path, "--profile", "pi-ai-1", "--impl", f"pi-ai:{package}")["cases"]
    assert isinstance(cases, list)
    [case] = cases
    assert (case["id"], case["status"], case["clauses"]) == ("scratch-shared-text", "passed", ["PA-SYSTEXT-1"])


def test_regen_of_pi_ai_1_needs_a_reference(tmp_path: Path) -> None:
    with pytest.raises(RegenRefused, match=r"pass --reference pi-ai:PATH"):
        regenerate(["scratch-shared-text"], scratch(tmp_path), profile="pi-ai-1")


@needs_node
@needs_npm
def test_regen_of_pi_ai_1_rewrites_a_shared_case_from_pi_ai(tmp_path: Path) -> None:
    package = install_pi_ai()
    from conformance.adapters.kinds import resolve_adapter

    root = scratch(tmp_path, SHARED.replace('value: "A\\n\\nB"', 'value: "wrong"'))
    result = regenerate(["scratch-shared-text"], root, lambda: resolve_adapter(f"pi-ai:{package}"), profile="pi-ai-1")
    assert not result.refused, result.refused
    assert '-    expect: {value: "wrong", input_unchanged: true}' in result.diff
    assert '+    expect: {value: "A\\n\\nB", input_unchanged: true}' in result.diff


def new(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return cli("fixtures", "new", "--fixtures", str(root), *options, timeout=120)


def test_fixtures_new_scaffolds_a_pi_ai_1_case(tmp_path: Path) -> None:
    root = tmp_path / "fixtures"
    (root / "pi-ai-1").mkdir(parents=True)
    result = new(root, "--profile", "pi-ai-1", "--operation", "current_tools", "--file", "pi-ai-1/tools.yaml")
    assert result.returncode == 0, result.stderr
    text = (root / "pi-ai-1" / "tools.yaml").read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=") and "pi-ai-1-fixture-file.schema.json" in text.splitlines()[0]
    assert "profile: pi-ai-1\n" in text and "features: [system-replay]" in text and "lab:" not in text
    [broken] = load_suite(root, profile="pi-ai-1").broken  # placeholders: not a runnable case yet
    assert broken.id == "pa-current-tools-1"
    # The next command names an implementation of pi-ai-1 (the default, the course's reference, is not one).
    assert "run --profile pi-ai-1 --impl " in result.stderr and "-k pa-current-tools-1" in result.stderr
    wrong = new(root, "--profile", "pi-ai-1", "--operation", "scripted_model")
    assert wrong.returncode == 2 and "profile pi-ai-1 has no operation 'scripted_model'" in wrong.stderr
    with_lab = new(root, "--profile", "pi-ai-1", "--operation", "current_tools", "--lab", "3.1")
    assert with_lab.returncode == 2 and "--lab is the course's" in with_lab.stderr


def test_fixtures_new_scaffolds_a_shared_case_that_only_its_placeholders_break(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    result = new(root, "--profile", "course,pi-ai-1", "--operation", "system_message_text", "--lab", "3.1", "--slug", "two")
    assert result.returncode == 0, result.stderr
    runs = [line for line in result.stderr.splitlines() if "pi-conformance run" in line]
    assert len(runs) == 2 and all(line.endswith("-k scratch-shared-two") for line in runs), runs
    assert "--profile" not in runs[0] and "--profile pi-ai-1 --impl " in runs[1], runs
    problems = [problem for problem in lint(root) if problem.case_id == "scratch-shared-two"]
    assert problems and all("placeholder left by `fixtures new`" in problem.message for problem in problems), problems
    assert {problem.message.split(":")[0] for problem in problems} >= {"clauses[0]", "clauses[1]", "description"}
    # Filled in, it is a case of both profiles.
    path = root / "shared" / "one.yaml"
    text = path.read_text(encoding="utf-8")
    filled = text.split("  - id: scratch-shared-two")[0] + SHARED.split("cases:\n")[1].replace("scratch-shared-text", "scratch-shared-two")
    path.write_text(filled.replace('sections: {s: "B"}', 'sections: {t: "B"}', 1), encoding="utf-8")
    assert not [problem for problem in lint(root) if problem.case_id == "scratch-shared-two"]
    assert [case.id for case in load_suite(root, profile="pi-ai-1").cases] == ["scratch-shared-text", "scratch-shared-two"]


def test_fixtures_new_keeps_course_cases_out_of_shared_files(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    result = new(root, "--operation", "system_message_text", "--lab", "3.1", "--file", "shared/one.yaml")
    assert result.returncode == 2
    assert "is a file of profile course,pi-ai-1; scaffold its cases with --profile course,pi-ai-1" in result.stderr
    missing_lab = new(root, "--profile", "course,pi-ai-1", "--operation", "system_message_text")
    assert missing_lab.returncode == 2 and "--lab is required" in missing_lab.stderr


def test_a_shared_file_that_yaml_cannot_parse_still_counts_its_cases_in_their_course_lab(tmp_path: Path) -> None:
    text = (Path(__file__).parents[2] / "fixtures" / "shared" / "system-text.yaml").read_text(encoding="utf-8")
    root = scratch(tmp_path, text.split("\n", 1)[1] + "\n  - id: [unclosed\n")
    broken = load_suite(root).broken
    assert broken and all(entry.lab == "3.1" and entry.chapter == "03" for entry in broken), broken[:2]


@costly
def test_the_export_manifest_gives_a_shared_case_its_course_lab_and_its_pi_ai_1_areas() -> None:
    from collections import Counter

    from conformance.authoring.export import manifest

    document = manifest(REPO / "fixtures")
    course = load_suite()
    assert document["labs"] == dict(sorted(Counter(case.lab for case in course.cases).items()))
    entries = document["cases"]
    assert isinstance(entries, list)
    shared = {str(entry["id"]): entry for entry in entries if isinstance(entry, dict) and entry.get("profile") == ["course", "pi-ai-1"]}
    pi_ai = {case.id: case for case in load_suite(profile="pi-ai-1").cases}
    by_id = {case.id: case for case in course.cases}
    assert shared
    for case_id, entry in shared.items():
        assert (entry["lab"], entry["chapter"], entry["features"]) == (by_id[case_id].lab, "03", list(by_id[case_id].features))
        assert entry["areas"] == [name for name in pi_ai[case_id].features if name in PI_AI_1.features]


def test_regen_of_the_course_rewrites_a_shared_case_from_the_course_reference(tmp_path: Path) -> None:
    root = scratch(tmp_path, SHARED.replace('value: "A\\n\\nB"', 'value: "wrong"'))
    result = regenerate(["scratch-shared-text"], root)
    assert not result.refused, result.refused
    assert '+    expect: {value: "A\\n\\nB", input_unchanged: true}' in result.diff
    for path, text in result.new_texts.items():
        path.write_text(text, encoding="utf-8")
    assert not load_suite(root).broken and not load_suite(root, profile="pi-ai-1").broken
    assert load_suite(root, profile="pi-ai-1").cases[0].expect == {"value": "A\n\nB", "input_unchanged": True}


def test_a_course_run_selecting_a_pi_ai_1_clause_is_told_which_profile_has_it() -> None:
    from conformance.loading.selection import selection_problems
    from conformance.model.clauses import load_clauses

    known = load_clauses()
    assert selection_problems([], [], ["PA-SYSTEXT-1"], known) == [
        "--clause PA-SYSTEXT-1: a clause of profile pi-ai-1 (spec/pi-ai-1/spec.md); run with --profile pi-ai-1"
    ]
    assert selection_problems([], [], ["SYS-TEXT-1"], known) == []


def test_a_pi_ai_1_run_checks_its_own_areas_and_clauses() -> None:
    from conformance.loading.selection import selection_problems
    from conformance.model.clauses import load_profile_clauses

    known = load_profile_clauses("pi-ai-1")
    assert selection_problems(["messages"], [], ["PA-SYSTEXT-1"], known, "pi-ai-1") == []
    # A shared case cites SYS-TEXT-1 too, but a pi-ai-1 run selects by pi-ai-1's clauses only.
    problems = selection_problems(["3.1"], ["03"], ["SYS-TEXT-1", "PA-SYSTEXT-99"], known, "pi-ai-1")
    assert problems[0] == (
        "--lab 3.1: profile pi-ai-1 has no such area; valid areas: messages, system-replay, event-streams, faux-provider"
    )
    assert problems[1].startswith("--chapter 03: profile pi-ai-1 has no chapters")
    assert problems[2] == "--clause SYS-TEXT-1: a clause of profile course (spec/spec.md); run with --profile course"
    assert problems[3].startswith("--clause PA-SYSTEXT-99: no such clause in spec/pi-ai-1/spec.md; did you mean PA-SYSTEXT-1")


def test_run_with_an_area_runs_only_that_area(tmp_path: Path) -> None:
    # In a subprocess: `run` drives pytest, whose plugin state must not leak into this session.
    report = tmp_path / "report.json"

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return cli("run", "--profile", "pi-ai-1", "--impl", "python:examples.pi_ai_port.conformance:ADAPTER", *extra)

    done = run("--lab", "faux-provider", "--report-json", str(report))
    assert done.returncode == 0, done.stdout + done.stderr
    cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
    assert cases and {case["area"] for case in cases} == {"faux-provider"}
    refused = run("--lab", "3.1")
    assert refused.returncode == 4 and "--lab 3.1: profile pi-ai-1 has no such area" in refused.stderr  # pytest's usage error
