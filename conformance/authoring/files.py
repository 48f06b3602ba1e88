"""Reading fixture files for the toolkit: text, positioned nodes and data, with the loader's paths."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.loading.loader import display_path
from conformance.yamlio import positions as yamltext
from conformance.yamlio import safe as yamlsafe


@dataclass
class FixtureText:
    """One fixture file as text, with its nodes and its data when it parses."""

    path: Path
    display: str
    text: str
    document: yamltext.Document | None
    data: JsonValue

    @property
    def cases(self) -> list[tuple[yamltext.Node, JsonObject]]:
        """Each case's node and raw mapping (entries that are not mappings are skipped)."""
        if self.document is None or not isinstance(self.data, dict) or not isinstance(self.data.get("cases"), list):
            return []
        raw_cases = self.data["cases"]
        assert isinstance(raw_cases, list)
        nodes = yamltext.case_nodes(self.document)
        return [(node, raw) for node, raw in zip(nodes, raw_cases, strict=False) if isinstance(raw, dict)]


def real_path(display: str, root: Path) -> Path:
    """The file a loader-style display path names (the inverse of :func:`display_path`)."""
    return root.resolve().parent / display


def read(path: Path, root: Path) -> FixtureText:
    """Read a fixture file; ``document`` and ``data`` are None when it is not valid YAML.

    Not UTF-8, nesting too deep or aliases that expand without bound also give None (the
    loader reports those problems): the toolkit's checks walk the data.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return FixtureText(path, display_path(path, root), "", None, None)
    try:
        node = yamlsafe.compose(text, yamltext.LOADER)  # refuses billion laughs before anything walks them
        document = yamltext.parse(text)
        # Constructed from the node already composed: parsing the text a third time cost as much again.
        data: JsonValue = yaml.constructor.SafeConstructor().construct_document(node) if node is not None else None
    except (yaml.YAMLError, RecursionError):
        return FixtureText(path, display_path(path, root), text, None, None)
    return FixtureText(path, display_path(path, root), text, document, data)
