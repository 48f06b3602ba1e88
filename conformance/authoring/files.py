"""Reading fixture files for the toolkit: text, positioned nodes and data, with the loader's paths."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.loading import broken_yaml
from conformance.loading.file_reading import parse_text
from conformance.loading.loader import display_path
from conformance.yamlio import positions as yamltext
from conformance.yamlio import safe as yamlsafe


@dataclass
class FixtureText:
    """One fixture file as text, with its data and (read when first asked for) its nodes, when it parses."""

    path: Path
    display: str
    text: str
    #: True when the text is valid YAML (within the limits of conformance.yamlio.safe).
    parsed: bool
    data: JsonValue
    _document: yamltext.Document | None = field(default=None, repr=False, compare=False)

    @property
    def document(self) -> yamltext.Document | None:
        """The positioned nodes of the text, None when it does not parse.

        Read on first use: lint needs a file's nodes only for the line of a problem it found in
        the data, and reading them costs as much as parsing the file again.
        """
        if self.parsed and self._document is None:
            self._document = yamltext.parse(self.text)
        return self._document

    @property
    def raw_cases(self) -> list[tuple[int, JsonObject]]:
        """Each case's index in the list and raw mapping (entries that are not mappings are skipped)."""
        if not self.parsed or not isinstance(self.data, dict) or not isinstance(self.data.get("cases"), list):
            return []
        raw_cases = self.data["cases"]
        assert isinstance(raw_cases, list)
        return [(index, raw) for index, raw in enumerate(raw_cases) if isinstance(raw, dict)]

    def case_node(self, index: int) -> yamltext.Node:
        """The node of case ``index`` of the ``cases`` list (of a file that parses)."""
        assert self.document is not None
        return yamltext.case_nodes(self.document)[index]

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


def read(path: Path, root: Path, recover: bool = False) -> FixtureText:
    """Read a fixture file; ``document`` and ``data`` are None when it is not valid YAML.

    Not UTF-8, nesting too deep or aliases that expand without bound also give None (the
    loader reports those problems): the toolkit's checks walk the data. With ``recover`` (lint),
    a file that is not valid YAML is read with the case entry holding the mistake blanked out,
    as the loader reads it, so that its other cases' text is checked too; never for a tool that
    writes the file back.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return FixtureText(path, display_path(path, root), "", False, None)
    try:
        # The loader's parse of the same text when lint shares it; refuses billion laughs before anything walks them.
        _, data = parse_text(text)
    except yamlsafe.YamlLimitError:
        return FixtureText(path, display_path(path, root), text, False, None)
    except (yaml.YAMLError, RecursionError) as error:
        rest = _without_the_mistake(error, text) if recover else None
        if rest is None:
            return FixtureText(path, display_path(path, root), text, False, None)
        text, data = rest
    return FixtureText(path, display_path(path, root), text, True, data)  # type: ignore[arg-type]


def _without_the_mistake(error: BaseException, text: str) -> tuple[str, object] | None:
    """The text with the case entry holding a YAML error blanked out (lines kept) and its data, when that parses."""
    mark = getattr(error, "problem_mark", None)
    found = broken_yaml.without_entry_at(text, mark.line + 1) if mark is not None else None
    if found is None:
        return None
    try:
        return found[0], parse_text(found[0])[1]
    except (yaml.YAMLError, RecursionError):
        return None
