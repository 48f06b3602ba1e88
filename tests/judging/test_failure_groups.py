"""Failing cases grouped by cause in `run` and `--report-json`; clean errors for broken `python:` targets."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from conformance.common.jsontypes import JsonObject
from conformance.grading.grader import SubmissionResult
from conformance.grading.rubric import load_rubric
from conformance.grading.scoring import score
from conformance.judging.failure_groups import cause_of, group_failures, variable_numbers_normalised
from conformance.judging.outcome import Divergence, Outcome
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.model.clauses import Clause, load_clauses, load_profile_clauses
from conformance.reports.formats import json_report, markdown, terminal
from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import costly

SHARED_PARTIAL = "python:tests.support.variants:partials_shared_between_events"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return cli(*args, env=env)


def test_many_cases_with_one_cause_print_as_one_group_with_one_example(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run_cli("run", "--impl", SHARED_PARTIAL, "--lab", "4.1", "--report-json", str(report))
    assert result.returncode == 1
    out = result.stdout
    groups = re.findall(r"^\[(\d+)\] (\d+) cases?: (.*)$", out, flags=re.MULTILINE)
    failed = int(re.search(r"(\d+) failed", out.splitlines()[-1])[1])  # type: ignore[index]
    assert len(groups) == 1 and int(groups[0][1]) == failed > 10
    assert "steps[*].events[*].partial.content" in groups[0][2]
    assert out.count("  case:    ") == 1, "one full example per group, not one block per case"
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [group["count"] for group in data["groups"]] == [failed]
    assert data["groups"][0]["pattern"] == "steps[*].events[*].partial.content" and data["groups"][0]["clause"].startswith("SM-PLAY")
    failing = [case for case in data["cases"] if case["status"] == "failed"]
    assert {case["id"] for case in failing} == set(data["groups"][0]["cases"])
    example = failing[0]
    assert example["lab"] == "4.1" and re.match(r"fixtures/ch04/.+\.yaml:\d+$", example["fixture"])
    assert example["clauses"] and "features" in example
    assert set(example["divergence"]) == {"path", "expected", "actual", "note", "kind", "key"}
    assert example["divergence"]["path"].startswith("steps[")


def test_all_divergences_lists_every_one_of_a_case(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    case_id = "sm-text-three-blocks-partials-not-shared"
    result = run_cli("run", "--impl", SHARED_PARTIAL, "-k", case_id, "--all-divergences", "--report-json", str(report))
    assert result.returncode == 1
    case = next(case for case in json.loads(report.read_text(encoding="utf-8"))["cases"] if case["id"] == case_id)
    paths = [divergence["path"] for divergence in case["divergences"]]
    assert paths[0] == case["divergence"]["path"] and len(paths) >= 3
    assert len({re.sub(r"events\[\d+\]", "events[]", path) for path in paths}) < len(paths), "the same key diverges at several events"
    assert f"all {len(paths)} divergences:" in result.stdout


def test_skip_reasons_are_summarised_once_each(tmp_path: Path) -> None:
    (tmp_path / "only_text_of.py").write_text("from reference_impl import text_of\n", encoding="utf-8")
    result = run_cli("run", "--impl", "python:only_text_of", "--lab", "3.1", env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"})
    summary = result.stdout.split("\nskipped\n")[1]
    reasons = re.findall(r"^\s+(\d+) x (.+)$", summary, flags=re.MULTILINE)
    assert len(reasons) == len({reason for _, reason in reasons}) >= 5
    replay_cases = sum(case.operation == "current_system_message" and case.lab == "3.1" for case in load_suite(None, load_clauses()).cases)
    assert (str(replay_cases), "not implemented: only_text_of has no current_system_message") in reasons
    assert sum(int(count) for count, _ in reasons) == int(re.search(r"(\d+) skipped", result.stdout)[1])  # type: ignore[index]


def test_a_python_target_that_cannot_be_imported_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "needs_missing_dep.py").write_text("import surely_not_installed_dep\n", encoding="utf-8")
    (tmp_path / "raises_on_import.py").write_text("VALUE = 1 / 0\n", encoding="utf-8")
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    cases = {
        "python:no_such_module_anywhere": "check the name",
        "python:needs_missing_dep": "imports 'surely_not_installed_dep', which is not installed here",
        "python:raises_on_import": "importing it raised ZeroDivisionError",
        "python:json:no_such_attribute": "has no attribute 'no_such_attribute'; it has: ",
    }
    for impl, fix in cases.items():
        result = run_cli("run", "--impl", impl, env=env)
        assert result.returncode == 2, impl
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and fix in lines[0] and "Traceback" not in result.stderr and "Exit" not in result.stderr, result.stderr


def _errored(message: str) -> Outcome:
    return Outcome("any", "errored", message, 0.1)


def test_messages_that_differ_only_in_variable_numbers_share_a_group() -> None:
    case = load_suite(None, load_clauses()).cases[0]
    same_causes = [
        ["timed out: text_of did not return within 1 s", "timed out: text_of did not return within 2.5 s"],
        ["IndexError at events[3]: 4 items, took 12ms", "IndexError at events[17]: 18 items, took 7ms"],
        ["expected -1 but got 40%", "expected -3 but got 7%"],
    ]
    for messages in same_causes:
        groups = group_failures([(case, _errored(message)) for message in messages], {})
        assert len(groups) == 1, groups
    assert group_failures([(case, _errored(same_causes[1][0]))], {})[0].pattern == "IndexError at events[*]: N items, took Nms"


def test_digits_that_name_something_are_kept_in_a_group_heading() -> None:
    case = load_suite(None, load_clauses()).cases[0]
    kept = [
        "not run: this case needs --profile pi-ai-1",
        "the implementation exited with status 2",
        "killed by signal 9",
        "sha256 mismatch in v1.2.3 of tool_2, 2nd try, 0x1f",
        "lab 3.1 is not graded",
    ]
    for message in kept:
        assert [group.pattern for group in group_failures([(case, _errored(message))], {})] == [message]
    distinct = ["the implementation exited with status 1", "the implementation exited with status 2"]
    assert len(group_failures([(case, _errored(message)) for message in distinct], {})) == 2
    mixed = "exited with status 2 after 3 tries on --profile pi-ai-1"
    assert variable_numbers_normalised(mixed) == "exited with status 2 after N tries on --profile pi-ai-1"


@costly
def test_an_unusable_impl_is_a_clean_usage_error_never_pytest_exit(tmp_path: Path) -> None:
    cases = {
        "cmd:": "cmd: needs a command line",
        f"cmd:{tmp_path / 'no-such-program'}": "command not found",
        f"pi-course:{tmp_path / 'missing'}": "is not a folder",
        "bogus": "unknown implementation 'bogus'",
    }
    for impl, message in cases.items():
        result = run_cli("run", "--impl", impl, "--lab", "3.1")
        assert result.returncode == 2, (impl, result.stdout, result.stderr)
        assert "Exit" not in result.stdout + result.stderr and "Traceback" not in result.stderr, (impl, result.stdout, result.stderr)
        first = result.stderr.strip().splitlines()[0]
        assert message in first and first.startswith("ERROR: pi-conformance: "), (impl, result.stderr)
    # The suite run as a plain pytest suite says it the same way, with pytest's usage-error status.
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/suite", "-q", "-p", "no:xdist", "--impl", "cmd:"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert plain.returncode == 4 and "Exit" not in plain.stdout + plain.stderr, plain.stdout + plain.stderr
    assert "ERROR: pi-conformance: cmd: needs a command line" in plain.stderr


# -- causes: place and kind ----------------------------------------------------------------


def _case(operation: str = "scripted_model", case_id: str = "c", lab: str = "4.2") -> Case:
    consume: JsonObject = {"action": "consume"}
    steps = (consume,) * 6 if operation in ("scripted_model", "event_stream") else ()
    return Case(case_id, "scratch.yaml", 1, "04", lab, ("SM-ERR-2",), "scratch", operation, {}, steps=steps)


def _diverged(case: Case, divergence: Divergence) -> tuple[Case, Outcome]:
    return case, Outcome(case.id, "failed", str(divergence), 0.1, divergence=divergence, step_index=0 if case.steps else None)


def test_two_bugs_under_one_partial_are_two_causes_and_one_bug_at_many_depths_is_one() -> None:
    shared = [
        _diverged(_case(case_id="a"), Divergence("steps[1].events[0].partial.content", "0 items", "1 item", kind="unexpected")),
        _diverged(_case(case_id="b"), Divergence("steps[2].events[3].partial.content", "1 item", "2 items", kind="unexpected")),
    ]
    lost = [_diverged(_case(case_id="c"), Divergence("steps[3].events[0].partial.errorMessage", '"x"', "nothing", kind="missing"))]
    groups = group_failures([*shared, *lost], {})
    assert [(str(group.cause), len(group.members)) for group in groups] == [
        ("steps[*].events[*].partial.content: unexpected", 2),
        ("steps[*].events[*].partial.errorMessage: missing", 1),
    ]


def test_a_key_lost_everywhere_is_one_cause_reported_where_it_originates() -> None:
    partials = [
        _diverged(_case(case_id=f"p{n}"), Divergence(f"steps[{n}].events[0].partial.errorMessage", '"x"', "nothing", kind="missing"))
        for n in range(3)
    ]
    result = _diverged(_case(case_id="r"), Divergence("steps[1].value.errorMessage", '"x"', "nothing", kind="missing"))
    (group,) = group_failures([*partials, result], {})
    assert group.pattern == "steps[*].value.errorMessage" and len(group.members) == 4
    assert group.example[0].id == "r", "the example is the result, where the message is made"


def test_an_unexpected_key_is_its_own_place_and_an_operation_tells_values_apart() -> None:
    replay = _case("current_system_message", "replay", "3.1")
    prompt = _case("current_system_prompt", "prompt", "3.1")
    unexpected = Divergence("value", "{}", '{"sections": {}}', 'unexpected key "sections": {}', "unexpected", "sections")
    timestamp = Divergence("value.timestamp", "10", "30")
    order = Divergence("value", json.dumps("A\n\nB"), json.dumps("B\n\nA"))
    causes = [
        str(cause_of(*_diverged(case, divergence))) for case, divergence in [(replay, unexpected), (replay, timestamp), (prompt, order)]
    ]
    assert causes == [
        "current_system_message value.sections: unexpected",
        "current_system_message value.timestamp: another value",
        "current_system_prompt value: the same lines in another order",
    ]


def test_event_types_are_part_of_the_cause() -> None:
    missed = _diverged(_case(case_id="a"), Divergence("steps[2].events[0].type", '"error"', '"start"'))
    replayed = _diverged(_case(case_id="b"), Divergence("steps[2].events[0].type", '"start"', '"error"'))
    assert len(group_failures([missed, replayed], {})) == 2


DIED = (
    "could not observe the implementation: @pi/course exited with status 3 during scripted_model while loading dist/src/scripted-model.js"
)


def test_a_program_that_dies_loading_a_module_is_one_cause_in_one_line() -> None:
    first = DIED
    later = first + " (in an earlier process; the module is not loaded again in this run)"
    case = _case()
    outcomes = [Outcome("c0", "errored", first + "\n--- stderr ---\nboom", 0.1)] + [
        Outcome(f"c{n}", "errored", later, 0.1) for n in range(1, 103)
    ]
    (group,) = group_failures([(case, outcome) for outcome in outcomes], {})
    assert len(group.members) == 103
    assert str(group.cause) == (
        "the program ended while importing dist/src/scripted-model.js (exit status 3): "
        "code at the top level of that module ends the process"
    )


def test_a_timeout_names_the_operation_whatever_the_limit() -> None:
    outcomes = [
        Outcome("a", "failed", "timed out: text_of did not return within 1 s", 1.0, timed_out=True),
        Outcome("b", "failed", "timed out: text_of did not return within 0.3 s", 0.3, timed_out=True),
        Outcome("c", "failed", "not run: text_of timed out 3 times in a row, so it is not tried again", 0.0, timed_out=True, given_up=True),
    ]
    (group,) = group_failures([(_case("text_of", "t", "3.1"), outcome) for outcome in outcomes], {})
    assert str(group.cause) == "text_of: never returned (timed out)" and len(group.members) == 3


def crashed_on_import() -> SubmissionResult:
    """A course submission whose scripted-model.js ends the process on import: every scripted_model case errors."""
    rubric = load_rubric()
    cases = [case for case in load_suite(None, load_clauses()).cases if rubric.selects(case)]
    later = DIED + " (in an earlier process; the module is not loaded again in this run)"
    outcomes = []
    for case in cases:
        if case.operation != "scripted_model":
            outcomes.append(Outcome(case.id, "passed", "", 0.0))
        else:
            outcomes.append(Outcome(case.id, "errored", DIED if not outcomes or outcomes[-1].status == "passed" else later, 0.0))
    graded = score(rubric, zip(cases, outcomes, strict=True))
    return SubmissionResult("crashes-on-import", "pi-course:x", "x", "crashed", "", graded, rubric, 1.0)


def test_the_terminal_reports_a_module_that_exits_on_import_in_one_line() -> None:
    result = crashed_on_import()
    text = terminal.render(result, load_clauses())
    listed = text.split("failing cases: ", 1)[1].split("\n\n", 1)[0].splitlines()
    errored = sum(graded.outcome.status == "errored" for graded in result.score.cases)
    assert listed[0] == f"{errored} in 1 cause, one line each" and len(listed) == 2, listed
    assert "ended while importing dist/src/scripted-model.js (exit status 3)" in listed[1]
    assert text.count("── lab ") == 1, "the crash is shown in full once, not once per lab"


def test_markdown_and_json_report_one_line_per_cause_worded_as_the_terminal() -> None:
    result = crashed_on_import()
    clauses = load_clauses()
    errored = [graded.case.id for graded in result.score.cases if graded.outcome.status == "errored"]
    terminal_line = terminal.render(result, clauses).split("failing cases: ", 1)[1].splitlines()[1].strip()
    what = terminal_line.split(" cases: ", 1)[1].split("  (", 1)[0]
    data = json.loads(json_report.render(result, clauses))
    (cause,) = data["causes"]
    assert cause["count"] == len(errored) and cause["cases"] == errored and cause["labs"] == ["4.1", "4.2"]
    assert cause["cause"] == what and cause["line"].startswith(terminal_line.split("  (", 1)[0])
    assert all(case_id in cause["line"] for case_id in errored), "JSON and Markdown lines list every case id"
    text = markdown.render(result, clauses)
    section = text.split("## Failing cases: ", 1)[1].split("\n## ", 1)[0]
    bullets = [line for line in section.splitlines() if line.startswith("- ")]
    assert section.startswith(f"{len(errored)} in 1 cause, one line each") and len(bullets) == 1
    assert bullets[0].startswith(f"- lab 4.1, 4.2  {len(errored)} cases: {what}  (`")
    # The identical failures are shown in full once per lab, the rest by id.
    assert text.count("```text") == 2 and text.count("ends the process") == 2 + 1 + 2, text
    per_lab = {lab: sum(graded.case.lab == lab for graded in result.score.cases if graded.case.id in errored) for lab in ("4.1", "4.2")}
    assert f"{per_lab['4.1'] - 1} more cases of lab 4.1 failed the same way" in text


def test_another_order_is_said_only_of_a_permutation_and_a_missing_blank_line_is_named() -> None:
    prompt = _case("current_system_prompt", "prompt", "3.1")
    readings = {
        "reordered": (json.dumps("A\n\nB"), json.dumps("B\n\nA")),
        "a blank line lost": (json.dumps("A\n\nB"), json.dumps("A\nB")),
        "a line added": (json.dumps("A\n\nB"), json.dumps("A\n\nB\n\nC")),
        "a line lost": (json.dumps("A\n\nB\n\nC"), json.dumps("A\n\nC")),
    }
    causes = {what: str(cause_of(*_diverged(prompt, Divergence("value", *texts)))) for what, texts in readings.items()}
    assert causes == {
        "reordered": "current_system_prompt value: the same lines in another order",
        "a blank line lost": "current_system_prompt value: the same lines, with blank lines missing or added between them",
        "a line added": "current_system_prompt value: lines that should not be there",
        "a line lost": "current_system_prompt value: lines missing",
    }


def test_one_place_under_one_clause_is_one_cause_whatever_the_kind() -> None:
    # A ScriptedModel that records the caller's context by reference: the request shows another
    # message in some cases and an extra one in others (requests-by-reference, issue 37).
    changed = _diverged(_case(case_id="a"), Divergence("steps[2].requests[0].messages", "[1 item]", "[another]"))
    extra = _diverged(_case(case_id="b"), Divergence("steps[3].requests[1].messages", "1 item", "2 items", kind="unexpected"))
    (group,) = group_failures([changed, changed, extra], {})
    assert group.pattern == "steps[*].requests[*].messages" and len(group.members) == 3
    assert group.kind == "value", "the largest cause names the group"
    # The same place under another clause is another cause.
    other_clause = replace(_case(case_id="c"), clauses=("SM-REQ-2",))
    elsewhere = _diverged(other_clause, Divergence("steps[3].requests[1].messages", "1 item", "2 items", kind="unexpected"))
    assert len(group_failures([changed, elsewhere], {})) == 2


def _upstream_groups(divergences: dict[str, Divergence]) -> dict[str, int]:
    """Members per cause when each named pi-agent-core-1 case fails with its divergence."""
    clauses = load_profile_clauses("pi-agent-core-1")
    cases = {case.id: case for case in load_suite(profile="pi-agent-core-1").cases}
    failed = [(cases[case_id], Outcome(case_id, "failed", str(found), 0.0, divergence=found)) for case_id, found in divergences.items()]
    return {str(group.cause): len(group.members) for group in group_failures(failed, clauses)}


def test_a_whole_run_observation_is_placed_at_its_list_items_key() -> None:
    """agent_loop observes a run in lists: two missing behaviours diverging in `result` are two causes, not one."""
    divergences = {
        "pac-text-turn-run-agent-loop": Divergence("result[1].thinkingLevel", '"off"', "nothing", kind="missing"),
        "pac-coerces-number-to-string": Divergence("result[0].role", '"system"', '"user"'),
        "pac-unknown-tool-result": Divergence("result[0].role", '"system"', '"user"'),
        "pac-round-trip": Divergence("trace[2]", '"message_start:system"', '"message_start:user"'),
        "pac-terminate-all-ends-run": Divergence("trace[14]", '"agent_end"', '"turn_start"'),
    }
    groups = _upstream_groups(divergences)
    assert groups == {
        'agent_loop result[*].role: expected "system", got "user"': 2,
        "agent_loop result[*].thinkingLevel: missing": 1,
        'agent_loop trace[*]: expected "message_start:system", got "message_start:user"': 1,
        'agent_loop trace[*]: expected "agent_end", got "turn_start"': 1,
    }, groups


def test_the_upstream_agents_state_and_snapshots_are_placed_at_the_messages_key() -> None:
    """agent observes state and named snapshots: a missing thinkingLevel and a missing system message are two causes."""
    divergences = {
        "pac-agent-thinking-level": Divergence("state.messages[1].thinkingLevel", '"high"', "nothing", kind="missing"),
        "pac-agent-busy-continue-and-reset": Divergence("state.messages[1].thinkingLevel", '"off"', "nothing", kind="missing"),
        "pac-agent-listener-barrier": Divergence("snapshots.held.state.messages[0].role", '"system"', '"user"'),
        "pac-agent-pending-tool-calls": Divergence("snapshots.executing.state.messages[0].role", '"system"', '"user"'),
        "pac-agent-initial-state": Divergence("snapshots.new.queues.peek", "[]", "null"),
        "pac-agent-steer-while-idle": Divergence('snapshots["queued"].queues.peek', "[]", "null"),
    }
    groups = _upstream_groups(divergences)
    assert groups == {
        "agent state.messages[*].thinkingLevel: missing": 2,
        'agent snapshots[*].state.messages[*].role: expected "system", got "user"': 2,
        "agent snapshots[*].queues.peek: another value": 2,
    }, groups


def test_one_thing_where_two_were_expected_is_one_cause_and_two_things_are_two() -> None:
    # A result() that rejects where it should stay pending and where it should resolve: one stream bug.
    pending = _diverged(_case(case_id="a"), Divergence("steps[1].state", '"pending"', '"rejected"'))
    resolved = _diverged(_case(case_id="b"), Divergence("steps[2].state", '"resolved"', '"rejected"'))
    (group,) = group_failures([pending, pending, resolved], {"SM-ERR-2": Clause("SM-ERR-2", "result() state", 1)})
    assert group.detail == 'expected "pending", got "rejected"' and len(group.members) == 3
    # What came differs: two causes (an abort missed, a turn replayed).
    missed = _diverged(_case(case_id="c"), Divergence("steps[2].events[0].type", '"error"', '"start"'))
    replayed = _diverged(_case(case_id="d"), Divergence("steps[2].events[0].type", '"start"', '"error"'))
    assert len(group_failures([missed, replayed], {"SM-ERR-2": Clause("SM-ERR-2", "events type", 1)})) == 2
