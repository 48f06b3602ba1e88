"""``fixtures new``: a scaffold in the right file, failing lint until filled in, then running in the suite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.authoring.lint import lint
from tests.support.cli_runner import cli
from tests.support.fixture_scratch import run_fixtures, scratch
from tests.support.requirements import costly

# What an author types over each placeholder of a text_of scaffold (the values come from IR-TEXT-1, IR-TEXT-2).
FILLED_IN = {
    "clauses": "[IR-TEXT-1, IR-TEXT-2]",
    "description": "An empty text block between two others still contributes its empty entry.",
    "message": '{role: user, content: [{type: text, text: "A"}, {type: text, text: ""}, {type: text, text: "B"}], timestamp: 7}',
    "value": '"A\\n\\nB"',
}


def fill_in(path: Path) -> None:
    """Replace each ``key: ...TODO...`` line with what the author would write."""
    text = path.read_text(encoding="utf-8")
    for key, value in FILLED_IN.items():
        # A function, not a template: the values hold backslashes that re.sub would interpret.
        def fill(match: re.Match[str], v: str = value) -> str:
            return f"{match[1]}: {v}"

        text, count = re.subn(rf"^(\s+{key}): .*TODO:.*$", fill, text, count=1, flags=re.MULTILINE)
        assert count == 1, key
    path.write_text(text, encoding="utf-8")


def new(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    """``pi-conformance fixtures new --fixtures ROOT ARGS``."""
    return run_fixtures(capsys, "new", "--fixtures", str(root), *args)


def test_a_scaffold_fails_lint_until_filled_in_then_runs_in_the_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = scratch(tmp_path)
    target = root / "ch03" / "text-of.yaml"
    before = target.read_text(encoding="utf-8")
    code, out, err = new(capsys, root, "--operation", "text_of", "--lab", "3.1")
    assert code == 0, err
    location, case_id, _ = out.split(": ", 2)
    assert case_id == "text-of-3"  # the file's prefix, and a counter past its cases
    assert location.endswith("ch03/text-of.yaml:" + str(len(before.splitlines()) + 2))
    after = target.read_text(encoding="utf-8")
    assert after.startswith(before) and f"  - id: {case_id}\n" in after[len(before) :]

    problems = [str(problem) for problem in lint(root)]
    assert problems and all(f": {case_id}: " in problem and "placeholder left by `fixtures new`" in problem for problem in problems)
    assert {problem.split(": ")[2] for problem in problems} == {"clauses[0]", "description", "input.message", "expect.value"}

    fill_in(target)
    assert lint(root) == []
    result = cli("run", "--fixtures", str(root), "-k", case_id, "-v", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_every_operation_scaffolds_a_case_that_only_its_placeholders_break(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = scratch(tmp_path)
    operations = {
        "text_of": "3.1",
        "system_message_text": "3.1",
        "current_system_message": "3.1",
        "current_system_prompt": "3.1",
        "make_text": "3.1",
        "make_user_message": "3.1",
        "make_assistant_message": "3.1",
        "event_stream": "3.2",
        "scripted_model": "4.2",
        "run_agent_loop": "7.4",
    }
    for operation, lab in operations.items():
        code, _, err = new(capsys, root, "--operation", operation, "--lab", lab, "--file", f"ch0{lab[0]}/new.yaml")
        assert code == 0, err
    problems = lint(root)
    assert len({problem.case_id for problem in problems if problem.case_id != "-"}) == len(operations)
    assert all("placeholder left by `fixtures new`" in problem.message for problem in problems), [str(p) for p in problems]


def test_the_right_file_is_chosen_or_asked_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = scratch(
        tmp_path,
        {
            "ch04/exhaustion.yaml": ["sm-exhaust-result-without-consume-resolves"],
            "ch04/aborts.yaml": ["sm-abort-pre-aborted-result-without-consume"],
        },
    )
    code, _, err = new(capsys, root, "--operation", "scripted_model", "--lab", "4.2")
    assert code == 2 and "choose one with --file" in err and "ch04/aborts.yaml  topic '" in err and "(ids sm-abort-…)" in err
    # An id with a file's prefix picks that file.
    code, out, err = new(capsys, root, "--operation", "scripted_model", "--lab", "4.2", "--id", "sm-abort-twice")
    assert code == 0 and "ch04/aborts.yaml:" in out and ": sm-abort-twice: " in out, err
    code, out, _ = new(capsys, root, "--operation", "scripted_model", "--lab", "4.2", "--file", "ch04/exhaustion.yaml", "--slug", "late")
    assert code == 0 and ": sm-exhaust-late: " in out
    # Refusals: a taken id, a lab the operation does not belong to, no file for it.
    code, _, err = new(capsys, root, "--operation", "scripted_model", "--lab", "4.2", "--id", "sm-abort-twice")
    assert code == 2 and "is taken" in err
    code, _, err = new(capsys, root, "--operation", "text_of", "--lab", "4.1")
    assert code == 2 and "text_of belongs to lab 3.1" in err
    code, _, err = new(capsys, root, "--operation", "text_of", "--lab", "3.1")
    assert code == 2 and "name one with --file" in err


def test_a_new_topic_file_gets_the_schema_header_and_a_topic_placeholder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = scratch(tmp_path)
    code, out, _ = new(capsys, root, "--operation", "event_stream", "--lab", "3.2", "--file", "ch03/new-topic.yaml")
    assert code == 0 and out.startswith(str(root / "ch03" / "new-topic.yaml") + ":5: stream-")
    text = (root / "ch03" / "new-topic.yaml").read_text(encoding="utf-8")
    assert text.startswith('# yaml-language-server: $schema=../../spec/schemas/fixture-file.schema.json\nchapter: "03"\n')
    messages = [str(problem) for problem in lint(root)]
    assert "fixtures/ch03/new-topic.yaml:3: -: topic: placeholder left by `fixtures new`" in "\n".join(messages)
    assert not any("schema header" in message for message in messages)


@costly
def test_an_operation_whose_cases_live_only_in_a_shared_file_is_sent_there_with_the_command_that_adds_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from tests.support.paths import REPO

    root = tmp_path / "fixtures"
    shutil.copytree(REPO / "fixtures", root)
    shutil.copytree(REPO / "spec" / "schemas", tmp_path / "spec" / "schemas")
    code, _, err = new(capsys, root, "--operation", "current_system_message", "--lab", "3.1", "--slug", "new-one")
    assert code == 2
    assert "fixtures/shared/system-replay.yaml" in err and "shared with other profiles" in err
    suggested = next(line for line in err.splitlines() if "a case there: " in line).split("a case there: pi-conformance fixtures ")[1]
    assert suggested.endswith("--file shared/system-replay.yaml")
    # The command it names works as printed (plus the slug), and the case lands in the shared file.
    code, out, _ = run_fixtures(capsys, *suggested.split(), "--slug", "new-one")
    assert code == 0 and "shared/system-replay.yaml" in out and "sys-replay-new-one" in out
