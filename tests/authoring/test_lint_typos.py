"""Every typo a fixture author is likely to make is one lint problem, at its own line, with a
"did you mean", and the same answer on every run over the same bytes (issue 28)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.authoring import expected_schema
from conformance.authoring.lint import lint
from conformance.authoring.problems import Problem
from conformance.loading import schema_errors, validation_cache
from conformance.loading.loader import load_suite
from conformance.model.paths import schemas_dir
from conformance.model.schemas import load_schema, validator
from conformance.yamlio import safe as yamlsafe
from tests.support.fixture_scratch import DEFAULT_PICKS, scratch

MULTI = "ch04/multi-turn-and-requests.yaml"
ABORTS = "ch04/aborts.yaml"
ERRORS = "ch04/error-turns.yaml"
TEXT_OF = "ch03/text-of.yaml"
BATCH = "ch07/batch.yaml"
LIMITS = "ch07/limits.yaml"
LOOP_TEXT = "ch07/text-stop.yaml"
PICKS = {
    **DEFAULT_PICKS,
    MULTI: ["sm-multi-opening-example-two-text-turns"],
    ABORTS: ["sm-abort-pre-aborted-single-error-next-call-plays-next-turn", "sm-abort-pre-aborted-tool-turn-no-start"],
    ERRORS: ["sm-err-empty-partial-text-either-shape"],
    TEXT_OF: [*DEFAULT_PICKS[TEXT_OF], "text-of-readme-assistant-skips-tool-call"],
}


def edit_line(path: Path, needle: str, old: str, new: str) -> int:
    """Replace ``old`` by ``new`` on the first line holding ``needle``; that line's number."""
    lines = path.read_text(encoding="utf-8").split("\n")
    number = next(index for index, line in enumerate(lines) if needle in line)
    assert old in lines[number]
    lines[number] = lines[number].replace(old, new, 1)
    path.write_text("\n".join(lines), encoding="utf-8")
    return number + 1


def lint_twice(root: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Problem], list[Problem]]:
    """Lint ``root`` twice with one fresh validation cache, as two `make lint` runs would."""
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", str(cache))
    # `run` fills the cache between two lints on the same machine.
    first = lint(root, extra=True)
    load_suite(root)
    return first, lint(root, extra=True)


# -- the same answer every time -------------------------------------------------------------


def test_lint_gives_the_same_problems_twice_with_one_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = scratch(tmp_path, PICKS)
    edit_line(root / MULTI, "contentIndex: 0", "contentIndex", "content_index")
    first, second = lint_twice(root, tmp_path / "cache", monkeypatch)
    assert first == second
    assert any("unknown key 'content_index' (did you mean 'contentIndex'?)" in problem.message for problem in first)


def test_loading_gives_the_same_broken_cases_twice_with_one_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `run` errors the case on both runs, rather than erroring it once and then failing it.
    root = scratch(tmp_path, PICKS)
    edit_line(root / MULTI, "contentIndex: 0", "contentIndex", "content_index")
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    first = load_suite(root)
    assert [case.id for case in first.broken] == ["sm-multi-opening-example-two-text-turns"]
    assert load_suite(root).broken == first.broken


def test_lint_trusts_no_cache_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The cache is per user: an entry another checkout wrote (here, forged) never hides a problem.
    root = scratch(tmp_path, PICKS)
    path = root / MULTI
    edit_line(path, "contentIndex: 0", "contentIndex", "content_index")
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", str(cache))
    (cache / validation_cache.key(path.read_text(encoding="utf-8"))).touch()
    assert any("content_index" in problem.message for problem in lint(root, extra=True))


def test_a_change_to_the_checking_code_changes_every_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = validation_cache.key("chapter: '03'\n")
    validation_cache._checks_digest.cache_clear()
    monkeypatch.setattr(validation_cache, "_CHECKING_MODULES", (*validation_cache._CHECKING_MODULES, "model/paths.py"))
    try:
        assert validation_cache.key("chapter: '03'\n") != before
    finally:
        validation_cache._checks_digest.cache_clear()


# -- every typo at its own line, on the first run and the second -----------------------------


def copy_first_case(path: Path) -> int:
    """Append a copy of the file's first case (anchors and all) under a new id; the line of its first anchor."""
    lines = path.read_text(encoding="utf-8").split("\n")
    starts = [index for index, line in enumerate(lines) if line.startswith("  - id: ")]
    copy = lines[starts[0] : starts[1]]
    copy[0] += "-copy"
    path.write_text("\n".join([*lines, *copy]), encoding="utf-8")
    return len(lines) + next(index for index, line in enumerate(copy) if "&" in line) + 1


Typo = Callable[[Path], tuple[str, int]]
TYPOS: dict[str, tuple[Typo, str]] = {
    "content_index in an expected event": (
        lambda root: (MULTI, edit_line(root / MULTI, "contentIndex: 0", "contentIndex", "content_index")),
        "steps[2].expect.events[1].content_index: unknown key 'content_index' (did you mean 'contentIndex'?)",
    ),
    "rol in an input message": (
        lambda root: (TEXT_OF, edit_line(root / TEXT_OF, "role: assistant", "role:", "rol:")),
        "input.message.rol: unknown key 'rol' (did you mean 'role'?)",
    ),
    "rol in an expected request": (
        lambda root: (MULTI, edit_line(root / MULTI, "- {messages: [{role: user", "{role:", "{rol:")),
        "steps[7].expect.requests[0].messages[0].rol: unknown key 'rol' (did you mean 'role'?)",
    ),
    "$typ as a matcher": (
        lambda root: (ABORTS, edit_line(root / ABORTS, "provider: {$type: string}", "{$type:", "{$typ:")),
        "unknown matcher '$typ' (did you mean '$type'?)",
    ),
    "$oneof as a matcher": (
        lambda root: (ERRORS, edit_line(root / ERRORS, "$oneOf:", "$oneOf:", "$oneof:")),
        "steps[1].expect.events[\"$oneof\"]: unknown matcher '$oneof' (did you mean '$oneOf'?)",
    ),
    "acton in a step": (
        lambda root: (ABORTS, edit_line(root / ABORTS, "- action: consume", "action:", "acton:")),
        "steps[1].acton: unknown key 'acton' (did you mean 'action'?)",
    ),
    "topc as a file-level key": (
        lambda root: (ABORTS, edit_line(root / ABORTS, "topic:", "topic:", "topc:")),
        "topc: unknown key 'topc' (did you mean 'topic'?)",
    ),
    "await_startd as a loop step": (
        lambda root: (BATCH, edit_line(root / BATCH, "- {await_started: [slow, fast]}", "await_started", "await_startd")),
        "input.steps[1].await_startd: unknown key 'await_startd' (did you mean 'await_started'?)",
    ),
    "callid in an awaited event": (
        lambda root: (BATCH, edit_line(root / BATCH, "callId: fast-call}}", "callId", "callid")),
        "input.steps[3].await_event.callid: unknown key 'callid' (did you mean 'callId'?)",
    ),
    "wiat in a loop tool's script": (
        lambda root: (BATCH, edit_line(root / BATCH, "{wait: fast}", "{wait:", "{wiat:")),
        "input.tools[1].script[0].wiat: unknown key 'wiat' (did you mean 'wait'?)",
    ),
    "sigal in the loop's options": (
        lambda root: (LIMITS, edit_line(root / LIMITS, "options: {signal: pre_aborted}", "signal:", "sigal:")),
        "input.options.sigal: unknown key 'sigal' (did you mean 'signal'?)",
    ),
    "fresh_message in a loop's expect": (
        lambda root: (LOOP_TEXT, edit_line(root / LOOP_TEXT, "fresh_messages: true", "fresh_messages", "fresh_message")),
        "expect.fresh_message: unknown key 'fresh_message' (did you mean 'fresh_messages'?)",
    ),
    "a copied case with anchors": (
        lambda root: (ABORTS, copy_first_case(root / ABORTS)),
        "duplicate anchor &ab1b (first defined at line ",
    ),
}


@pytest.mark.parametrize("name", list(TYPOS))
def test_each_typo_is_one_problem_at_its_line_on_both_runs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make, fragment = TYPOS[name]
    root = scratch(tmp_path, PICKS)
    relative, line = make(root)
    for run in lint_twice(root, tmp_path / "cache", monkeypatch):
        assert [(problem.file, problem.line) for problem in run] == [(f"fixtures/{relative}", line)], [str(p) for p in run]
        [problem] = run
        assert fragment in problem.message, str(problem)
        assert "missing required key" not in problem.message and "allowed:" not in problem.message, str(problem)


def test_a_file_level_typo_keeps_every_case_counted_in_its_lab(tmp_path: Path) -> None:
    # As a YAML error does: each case is errored in its lab, and selectable by its id.
    root = scratch(tmp_path, PICKS)
    edit_line(root / ABORTS, "topic:", "topic:", "topc:")
    broken = load_suite(root).broken
    assert [(entry.id, entry.lab) for entry in broken] == [(case_id, "4.2") for case_id in PICKS[ABORTS]]
    assert all("unknown key 'topc'" in entry.problems[0] for entry in broken)


def test_a_misspelt_discriminator_is_not_charged_to_a_branch_without_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An error turn has no role: a turn without one is not "missing" it, but its typos are still named.
    root = scratch(tmp_path, PICKS)
    edit_line(root / ABORTS, "role: assistant", "role: assistant", "rol: assistant")
    [problem] = lint(root, extra=True)
    assert "unknown key 'rol' (did you mean 'role'?)" in problem.message and "missing" not in problem.message, str(problem)


# -- what an editor sees: the schema alone -----------------------------------------------------


def test_the_expected_ir_schema_is_generated_from_the_ir_schema() -> None:
    # Stale after an edit to ir.schema.json: run `python -m conformance.authoring.expected_schema`.
    assert (schemas_dir() / expected_schema.NAME).read_text(encoding="utf-8") == expected_schema.text()


def editor_errors(root: Path, relative: str) -> list[str]:
    """What a YAML language server validating against the file's schema would flag: the schema alone, no loader."""
    data = yamlsafe.load((root / relative).read_text(encoding="utf-8"))
    return [schema_errors.describe(error)[1] for error in validator("fixture-file.schema.json").iter_errors(data)]


@pytest.mark.parametrize(
    ("needle", "old", "new", "message"),
    [
        ("contentIndex: 0", "contentIndex", "content_index", "unknown key 'content_index' (did you mean 'contentIndex'?)"),
        ("- {messages: [{role: user", "{role:", "{rol:", "unknown key 'rol' (did you mean 'role'?)"),
        ("- type: done", "type: done", "type: finished", '"finished" is not a type this IR knows here'),
    ],
)
def test_the_fixture_schema_itself_flags_typos_in_expected_events_and_requests(
    needle: str, old: str, new: str, message: str, tmp_path: Path
) -> None:
    root = scratch(tmp_path, PICKS)
    assert editor_errors(root, MULTI) == []
    edit_line(root / MULTI, needle, old, new)
    assert any(message in found for found in editor_errors(root, MULTI)), editor_errors(root, MULTI)


def test_the_fixture_schema_names_the_keys_of_an_expected_event_for_completion() -> None:
    fixture_defs: Any = load_schema("fixture-file.schema.json")["$defs"]  # parsed JSON, walked key by key
    consume = fixture_defs["scripted_model_step_expect_consume"]
    events = fixture_defs["ExpectedModelEvents"]
    assert consume["properties"]["events"] == {"$ref": "#/$defs/ExpectedModelEvents"}
    assert events["else"]["items"] == {"$ref": "expected-ir.schema.json#/$defs/ModelEvent"}
    expected_defs: Any = load_schema(expected_schema.NAME)["$defs"]
    text_delta = expected_defs["TextDeltaEvent"]["else"]
    assert set(text_delta["properties"]) == {"type", "contentIndex", "delta", "partial"} and text_delta["additionalProperties"] is False


def test_an_id_without_its_files_prefix_is_reported_at_its_line(tmp_path: Path) -> None:
    root = scratch(tmp_path, {**PICKS, ABORTS: [*PICKS[ABORTS], "sm-abort-right-after-stream-returns"]})
    line = edit_line(root / ABORTS, "- id: sm-abort-right-after-stream-returns", "sm-abort-right", "abort-right")
    [problem] = lint(root, extra=True)
    assert (problem.file, problem.line, problem.case_id) == (f"fixtures/{ABORTS}", line, "abort-right-after-stream-returns")
    assert "does not start with 'sm-abort-', as every other id of this file does" in problem.message


# -- the same typos in pi-ai-1 and shared files ------------------------------------------------

PLAYBACK = "pi-ai-1/faux-playback.yaml"
FAUX_ERRORS = "pi-ai-1/faux-errors.yaml"
SHARED_STREAM = "shared/event-stream.yaml"
STREAMS = "pi-ai-1/event-streams.yaml"
PI_AI_PICKS = {
    **DEFAULT_PICKS,
    STREAMS: ["pa-ams-text-events-then-done", "pa-ams-every-event-type-passes"],
    PLAYBACK: ["pa-faux-text-one-chunk"],
    FAUX_ERRORS: ["pa-faux-factory-throws"],
    # The second case uses the events the first one anchors (&ok-text-delta).
    SHARED_STREAM: ["stream-consumer-started-before-push", "stream-consumer-started-midway"],
}


def edit_after(path: Path, after: str, needle: str, old: str, new: str) -> int:
    """:func:`edit_line` on the first line holding ``needle`` after one holding ``after``; that line's number."""
    lines = path.read_text(encoding="utf-8").split("\n")
    start = next(index for index, line in enumerate(lines) if after in line)
    number = next(index for index in range(start, len(lines)) if needle in lines[index])
    lines[number] = lines[number].replace(old, new, 1)
    path.write_text("\n".join(lines), encoding="utf-8")
    return number + 1


PI_AI_TYPOS: dict[str, tuple[Typo, str]] = {
    "rol in a pi-ai-1 expected request": (
        lambda root: (FAUX_ERRORS, edit_after(root / FAUX_ERRORS, "requests:", "{role: user", "{role:", "{rol:")),
        "expect.requests[0].context.messages[0].rol: unknown key 'rol' (did you mean 'role'?)",
    ),
    "rol in a pi-ai-1 input message": (
        lambda root: (PLAYBACK, edit_after(root / PLAYBACK, "action: stream", "{role: user", "{role:", "{rol:")),
        "steps[0].context.messages[0].rol: not an upstream Message (pi-ai 1.6.0 types.d.ts): unknown key 'rol' (did you mean 'role'?)",
    ),
    "acton in a pi-ai-1 step": (
        lambda root: (PLAYBACK, edit_line(root / PLAYBACK, "- action: consume", "action:", "acton:")),
        "steps[1].acton: unknown key 'acton' (did you mean 'action'?)",
    ),
    "content_index in a pi-ai-1 expected event": (
        lambda root: (PLAYBACK, edit_after(root / PLAYBACK, "action: consume", "contentIndex: 0", "contentIndex", "content_index")),
        "steps[1].expect.events[1].content_index: unknown key 'content_index' (did you mean 'contentIndex'?)",
    ),
    "a copied pi-ai-1 case with anchors": (
        lambda root: (STREAMS, copy_first_case(root / STREAMS)),
        "duplicate anchor &start-event (first defined at line ",
    ),
    "topc in a shared file": (
        lambda root: (SHARED_STREAM, edit_line(root / SHARED_STREAM, "topic:", "topic:", "topc:")),
        "topc: unknown key 'topc' (did you mean 'topic'?) (a problem of the file",
    ),
    "content_index in an anchored event two cases of a shared file use": (
        lambda root: (
            SHARED_STREAM,
            edit_after(root / SHARED_STREAM, "event: &ok-text-delta", "contentIndex", "contentIndex", "content_index"),
        ),
        "unknown key 'content_index' (did you mean 'contentIndex'?)",
    ),
}


@pytest.mark.parametrize("name", list(PI_AI_TYPOS))
def test_each_typo_of_a_pi_ai_or_shared_file_is_one_problem_at_its_line(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make, fragment = PI_AI_TYPOS[name]
    root = scratch(tmp_path, PI_AI_PICKS)
    relative, line = make(root)
    for run in lint_twice(root, tmp_path / "cache", monkeypatch):
        assert [(problem.file, problem.line) for problem in run] == [(f"fixtures/{relative}", line)], [str(p) for p in run]
        [problem] = run
        assert fragment in problem.message, str(problem)
        assert "missing required key" not in problem.message and "allowed:" not in problem.message, str(problem)
