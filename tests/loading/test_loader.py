"""A broken fixture is one clear error naming its file, case and path; nothing is dropped."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.loading.loader import Suite, load_suite
from tests.support.scratch_cases import GOOD_CASE, HEADER, write


def problems(suite: Suite) -> list[str]:
    return suite.problems


def test_bundled_fixtures_load_without_problems(suite: Suite) -> None:
    assert suite.problems == []


def test_valid_case_loads_with_its_location(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER + GOOD_CASE)
    loaded = load_suite(tmp_path)
    assert [case.id for case in loaded.cases] == ["scratch-good"]
    assert loaded.cases[0].location == "ch03/a.yaml:4" or loaded.cases[0].location.endswith("ch03/a.yaml:4")


def test_unparsable_yaml_names_file_and_line(tmp_path: Path) -> None:
    write(tmp_path, "bad.yaml", HEADER + GOOD_CASE + "  - id: [unclosed\n")
    loaded = load_suite(tmp_path)
    assert loaded.cases == []
    [problem] = loaded.problems
    # The case the text names is reported, in its lab, so totals still count it.
    assert "ch03/bad.yaml:" in problem and "scratch-good" in problem and "not valid YAML" in problem
    [entry] = loaded.broken
    assert (entry.id, entry.lab, entry.chapter) == ("scratch-good", "3.1", "03")


def test_schema_violation_names_case_and_path(tmp_path: Path) -> None:
    broken = GOOD_CASE.replace("scratch-good", "scratch-bad-lab").replace('lab: "3.1"', 'lab: "9.9"')
    write(tmp_path, "a.yaml", HEADER + GOOD_CASE + broken)
    loaded = load_suite(tmp_path)
    assert [case.id for case in loaded.cases] == ["scratch-good"]
    [problem] = loaded.problems
    assert problem.startswith(str(Path(loaded.broken[0].file))) and ":12: scratch-bad-lab: lab:" in problem


def test_deep_schema_violation_has_the_inner_path(tmp_path: Path) -> None:
    broken = GOOD_CASE.replace("scratch-good", "scratch-bad-role").replace("role: user", "role: robot")
    write(tmp_path, "a.yaml", HEADER + broken)
    [problem] = load_suite(tmp_path).problems
    assert "scratch-bad-role: input.message" in problem


def test_duplicate_id_points_at_the_first_definition(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER + GOOD_CASE)
    write(tmp_path, "b.yaml", HEADER + GOOD_CASE)
    loaded = load_suite(tmp_path)
    assert len(loaded.cases) == 1
    [problem] = loaded.problems
    assert "b.yaml:4: scratch-good: id: duplicate id, first defined at" in problem and "a.yaml:4" in problem


def test_unknown_clause_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER + GOOD_CASE.replace("IR-TEXT-1", "IR-TEXT-99"))
    [problem] = load_suite(tmp_path).problems
    assert "scratch-good: clauses[0]: unknown clause id 'IR-TEXT-99'" in problem


def test_yaml_values_that_are_not_json_are_reported(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", HEADER + GOOD_CASE.replace("timestamp: 1}", "timestamp: 2026-11-30}"))
    [problem] = load_suite(tmp_path).problems
    assert "input.message.timestamp" in problem and "not a JSON value" in problem


def test_file_without_cases_is_one_entry(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", 'chapter: "03"\ntopic: nothing\n')
    loaded = load_suite(tmp_path)
    assert [entry.id for entry in loaded.broken] == ["a::file"]


def test_scenario_call_used_before_stream(tmp_path: Path) -> None:
    body = HEADER.replace('"03"', '"04"') + textwrap.indent(
        textwrap.dedent(
            """\
            - id: scratch-bad-call
              lab: "4.1"
              clauses: [SM-REQ-1]
              description: consume names a call that no stream step created.
              operation: scripted_model
              input: {turns: []}
              steps:
                - {action: consume, call: nowhere}
            """
        ),
        "  ",
    )
    write(tmp_path, "a.yaml", body)
    [problem] = load_suite(tmp_path).problems
    assert "steps[0].call: call 'nowhere' is used before a stream step creates it" in problem


def test_assistant_stream_push_must_be_a_model_event(tmp_path: Path) -> None:
    body = HEADER + textwrap.indent(
        textwrap.dedent(
            """\
            - id: scratch-bad-event
              lab: "3.2"
              clauses: [AMS-1]
              description: pushes an event that is not a model event.
              operation: event_stream
              input: {kind: assistant}
              steps:
                - {action: push, event: {type: done, reason: finished}}
            """
        ),
        "  ",
    )
    write(tmp_path, "a.yaml", body)
    [problem] = load_suite(tmp_path).problems
    assert 'scratch-bad-event: steps[0].event.reason: not a model event: "finished" is not one of' in problem


def test_validation_cache_never_hides_a_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", HEADER + GOOD_CASE)
    assert load_suite(tmp_path).problems == []
    assert load_suite(tmp_path).problems == []  # served from the cache
    path.write_text(path.read_text(encoding="utf-8").replace('lab: "3.1"', 'lab: "9.9"'), encoding="utf-8")
    [problem] = load_suite(tmp_path).problems
    assert 'lab: "9.9" is not one of' in problem


def test_broken_files_are_not_cached(tmp_path: Path) -> None:
    body = HEADER + GOOD_CASE.replace("role: user", "role: robot")
    write(tmp_path, "a.yaml", body)
    assert len(load_suite(tmp_path).problems) == 1
    assert len(load_suite(tmp_path).problems) == 1


def test_a_non_json_value_does_not_hide_other_cases_problems(tmp_path: Path) -> None:
    dated = GOOD_CASE.replace("timestamp: 1}", "timestamp: 2026-11-30}")
    other = GOOD_CASE.replace("scratch-good", "scratch-bad-lab").replace('lab: "3.1"', 'lab: "9.9"')
    write(tmp_path, "a.yaml", HEADER + dated + other)
    problems = load_suite(tmp_path).problems
    assert len(problems) == 2
    assert "scratch-good: input.message.timestamp" in problems[0] and "not a JSON value" in problems[0]
    assert 'scratch-bad-lab: lab: "9.9" is not one of' in problems[1]


def test_the_parsed_cache_serves_the_same_cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "a.yaml", HEADER + GOOD_CASE)
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", "off")
    uncached = load_suite(tmp_path)
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    assert load_suite(tmp_path) == uncached  # parsed, then stored
    assert any(path.name.startswith("parsed-") for path in (tmp_path / "cache").iterdir())
    served = load_suite(tmp_path)
    assert served == uncached and [case.step_lines for case in served.cases] == [case.step_lines for case in uncached.cases]
