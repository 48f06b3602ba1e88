"""The fixture toolkit's building blocks: scratch folders load cleanly, YAML node positions, canonical JSON, placeholders."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.authoring import placeholders
from conformance.yamlio import canonical
from conformance.yamlio import positions as yamltext
from tests.support.fixture_scratch import run_fixtures, scratch


def test_scratch_fixtures_load_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = scratch(tmp_path)
    assert run_fixtures(capsys, "lint", "--fixtures", str(root))[0] == 0


def test_nodes_know_their_lines_and_aliases_their_own_position() -> None:
    text = "a: &x\n  b: 1\nc: [*x, 'q']\nd: |\n  two\n  lines\n\ne: end\n"
    document = yamltext.parse(text)
    assert document.root is not None
    alias = document.root.get("c")
    assert alias is not None and alias.in_flow is False and alias.flow is True
    [used] = document.aliases
    assert (used.line, text[used.start : used.end], used.target is document.root.get("a")) == (3, "*x", True)
    block_scalar = document.root.get("d")
    assert block_scalar is not None and text[block_scalar.start : block_scalar.end] == "|\n  two\n  lines"
    assert yamltext.line_of(document.root, ["c", 1]) == 3


def test_canonical_json_is_strict_and_layout_free() -> None:
    assert canonical.same({"a": 1, "b": [True]}, {"b": [True], "a": 1})
    assert not canonical.same(1, True) and not canonical.same(1, 1.0)
    assert canonical.inputs_key("x", {}, [{"action": "a", "expect": 1}]) == canonical.inputs_key("x", {}, [{"action": "a"}])


def test_placeholder_paths_cover_their_descendants_only() -> None:
    assert placeholders.covers("input.message", "input.message")
    assert placeholders.covers("input.message", "input.message.content[0]")
    assert not placeholders.covers("input.message", "input.messages")
    assert list(placeholders.find({"a": ["x", "TODO: y"]})) == [(["a", 1], "TODO: y")]
