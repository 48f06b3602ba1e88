"""What an editor sees (issue 28): the schema each fixture file's header names, alone, with no loader.

yaml-language-server validates a file against the schema its first line names. Every bundled
file must pass it, and a typo inside an expected event, an expected request or an input message
must be flagged by it, in course, pi-ai-1 and shared files alike (assistant event streams too).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.authoring import expected_schema
from conformance.authoring.lint import HEADER_PREFIX, lint
from conformance.model.paths import fixtures_dir, schemas_dir
from conformance.model.schemas import validator
from conformance.yamlio import safe as yamlsafe
from tests.support.fixture_scratch import DEFAULT_PICKS, run_fixtures, scratch


def editor_errors(path: Path) -> list[str]:
    """Each error (path: message) that validating ``path`` against the schema its header names gives."""
    text = path.read_text(encoding="utf-8")
    first = text.split("\n", 1)[0]
    assert first.startswith(HEADER_PREFIX), first
    schema = first.rsplit("/", 1)[-1]
    return [f"{list(error.absolute_path)}: {error.message}" for error in validator(schema).iter_errors(yamlsafe.load(text))]


@pytest.mark.parametrize("name", list(expected_schema.SOURCES))
def test_each_expected_value_schema_is_generated_from_its_ir(name: str) -> None:
    # Stale after an edit to an IR schema: run `python -m conformance.authoring.expected_schema`.
    assert (schemas_dir() / name).read_text(encoding="utf-8") == expected_schema.text(name)


@pytest.mark.parametrize("relative", sorted(str(path.relative_to(fixtures_dir())) for path in fixtures_dir().glob("*/*.yaml")))
def test_every_bundled_file_passes_the_schema_its_header_names(relative: str) -> None:
    assert editor_errors(fixtures_dir() / relative) == []


def edit(path: Path, after: str | None, needle: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` on the first line holding ``needle`` (after the first line holding ``after``)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    start = next(index for index, line in enumerate(lines) if after in line) if after else 0
    number = next(index for index in range(start, len(lines)) if needle in lines[index])
    assert old in lines[number]
    lines[number] = lines[number].replace(old, new, 1)
    path.write_text("\n".join(lines), encoding="utf-8")


# (file, the line to edit comes after one holding this, a needle on the line, old, new)
TYPOS: dict[str, tuple[str, str | None, str, str, str]] = {
    "course: content_index in an expected event": (
        "ch04/multi-turn-and-requests.yaml",
        "action: consume",
        "contentIndex: 0",
        "contentIndex",
        "content_index",
    ),
    "course: rol in an expected request": ("ch04/multi-turn-and-requests.yaml", None, "- {messages: [{role: user", "{role:", "{rol:"),
    "course: rol in an input message": ("ch03/text-of.yaml", None, "role: assistant", "role:", "rol:"),
    "pi-ai-1: content_index in an expected event": (
        "pi-ai-1/faux-playback.yaml",
        "action: consume",
        "contentIndex: 0",
        "contentIndex",
        "content_index",
    ),
    "pi-ai-1: rol in an expected request": ("pi-ai-1/faux-errors.yaml", "requests:", "{role: user", "{role:", "{rol:"),
    "pi-ai-1: rol in an input message": ("pi-ai-1/faux-playback.yaml", "action: stream", "{role: user", "{role:", "{rol:"),
    "pi-ai-1: rol in an assistant stream's expected result": (
        "pi-ai-1/event-streams.yaml",
        None,
        "value: {role: assistant, content: [], api: faux",
        "{role:",
        "{rol:",
    ),
    "pi-ai-1: content_index in an assistant stream's pushed event": (
        "pi-ai-1/event-streams.yaml",
        None,
        "event: &text-start",
        "contentIndex",
        "content_index",
    ),
    "shared: content_index in an assistant stream's expected event": (
        "shared/event-stream.yaml",
        "action: consume",
        "contentIndex:",
        "contentIndex",
        "content_index",
    ),
    "shared: rol in a pi-ai-1 input message": ("shared/system-replay.yaml", None, "- role: user", "role:", "rol:"),
    "shared: rol in a shared input message": (
        "shared/system-replay.yaml",
        "operation: current_system_message",
        "- role: user",
        "role:",
        "rol:",
    ),
    "shared: rol in an expected message": ("shared/system-replay.yaml", "expect:", "role: system", "role:", "rol:"),
}


@pytest.mark.parametrize("name", list(TYPOS))
def test_a_typo_is_flagged_by_the_editor_schema_in_every_kind_of_file(name: str, tmp_path: Path) -> None:
    relative, after, needle, old, new = TYPOS[name]
    path = tmp_path / relative
    path.parent.mkdir(parents=True)
    path.write_text((fixtures_dir() / relative).read_text(encoding="utf-8"), encoding="utf-8")
    edit(path, after, needle, old, new)
    typo = new.strip("{:")
    meant = old.strip("{:")
    errors = editor_errors(path)
    # Named (an unknown key), or the key it replaces is missing where the typo is.
    assert any(f"'{typo}'" in error or f"'{meant}' is a required property" in error for error in errors), errors


def test_lint_wants_the_header_of_the_files_own_schema(tmp_path: Path) -> None:
    # A pi-ai-1 file that names the course schema is checked by editors against the wrong shapes.
    root = scratch(tmp_path, {**DEFAULT_PICKS, "pi-ai-1/messages.yaml": ["pa-content-text-string-returned-as-is"]})
    path = root / "pi-ai-1" / "messages.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("pi-ai-1-fixture-file.schema.json", "fixture-file.schema.json", 1), encoding="utf-8")
    problems = [problem for problem in lint(root, extra=True) if problem.file.endswith("pi-ai-1/messages.yaml")]
    assert [(problem.line, problem.message) for problem in problems] == [
        (
            1,
            "the schema header names '../../spec/schemas/fixture-file.schema.json', not this file's schema "
            "pi-ai-1-fixture-file.schema.json: # yaml-language-server: $schema=../../spec/schemas/pi-ai-1-fixture-file.schema.json",
        )
    ]


def test_new_writes_the_header_of_the_new_files_own_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A pi-ai-1 file created among course files does not take their header: editors would check it as a course file.
    root = scratch(tmp_path)
    code, _, err = run_fixtures(
        capsys, "new", "--fixtures", str(root), "--profile", "pi-ai-1", "--operation", "faux_block", "--file", "ch03/upstream.yaml"
    )
    assert code == 0, err
    first = (root / "ch03" / "upstream.yaml").read_text(encoding="utf-8").split("\n", 1)[0]
    assert first.startswith(HEADER_PREFIX) and first.endswith("/pi-ai-1-fixture-file.schema.json"), first
    assert not [problem for problem in lint(root, extra=True) if problem.line == 1], "lint accepts the header"
