"""Replace values inside a YAML file's text, touching only the nodes whose value changes.

Rather than re-dumping a whole case (which would expand every alias, drop comments and
reflow the author's layout), the new value is compared with the old one node by node and
only the smallest nodes that differ are re-emitted: a changed scalar becomes one scalar (in
its old quoting style), a mapping that gained a key is re-emitted as a whole. Emitted YAML is
block style with flow style for innermost collections (``usage: {input: 1, output: 2,
totalTokens: 3}``), as the fixtures are written; inside a flow collection it is flow style.
An alias stays an alias when its anchored value changes the same way.
"""

from __future__ import annotations

import io
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from conformance.common.jsontypes import JsonValue
from conformance.yamlio import canonical
from conformance.yamlio import positions as yamltext

_LINE_START = re.compile(r"[ ]*(-[ ]+)*")
# Wide enough that PyYAML never folds a long string or flow collection over two lines.
_WIDTH = 1 << 16


class EditError(ValueError):
    """The change cannot be made safely in place; nothing is written."""


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``replacement``."""

    start: int
    end: int
    replacement: str


class _Dumper(yaml.SafeDumper):
    """Indents sequences under their key, uses flow style exactly for collections of scalars
    (``usage: {input: 1, output: 2, totalTokens: 3}``), as the fixtures are written, and
    never invents anchors."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def represent_mapping(self, tag: str, mapping: Any, flow_style: bool | None = None) -> yaml.MappingNode:
        node = super().represent_mapping(tag, mapping, flow_style)
        # PyYAML would also demand *plain* scalars; quoted text must not force block style.
        node.flow_style = all(isinstance(value, yaml.ScalarNode) for _, value in node.value)
        return node

    def represent_sequence(self, tag: str, sequence: Any, flow_style: bool | None = None) -> yaml.SequenceNode:
        node = super().represent_sequence(tag, sequence, flow_style)
        node.flow_style = all(isinstance(item, yaml.ScalarNode) for item in node.value)
        return node


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML would fold a multi-line string into a single-quoted scalar over several lines;
    # the fixtures write it on one line, double-quoted, with \n escapes. Non-ASCII text is
    # double-quoted too, as the fixtures write it.
    quoted = "\n" in value or not value.isascii()
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"' if quoted else None)


_Dumper.add_representer(str, _represent_str)


def _dump(value: JsonValue, flow: bool) -> str:
    """YAML text of ``value``: all flow style, or block style at the top with flow for collections of scalars."""
    stream = io.StringIO()
    dumper = _Dumper(stream, allow_unicode=True, sort_keys=False, width=_WIDTH)
    try:
        dumper.open()
        node = dumper.represent_data(value)
        if isinstance(node, yaml.CollectionNode):
            # The top level is block even when it holds only scalars: it replaces block text.
            node.flow_style = flow
        if flow:
            for child in _descendants(node):
                child.flow_style = True
        dumper.serialize(node)
        dumper.close()
    finally:
        dumper.dispose()
    return stream.getvalue()


def _descendants(node: yaml.Node) -> list[yaml.CollectionNode]:
    found: list[yaml.CollectionNode] = []
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            found.extend(_descendants(key) + _descendants(value))
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found.extend(_descendants(item))
    if isinstance(node, yaml.CollectionNode):
        found.append(node)
    return found


@dataclass
class Rewriter:
    """Computes edits for one file; remembers new values so that aliases can stay aliases."""

    text: str
    # New value of every written node that changes, by node identity.
    changed: dict[int, JsonValue] = field(default_factory=dict)
    # Aliases left in place because their anchored value changes exactly as they do.
    kept_aliases: set[int] = field(default_factory=set)

    def value_edits(self, node: yamltext.Node, old: JsonValue, new: JsonValue) -> list[Edit]:
        """The edits that turn the value written at ``node`` (``old``) into ``new``.

        Call in document order, so that an anchor's new value is known before its aliases.
        """
        if canonical.same(old, new):
            return []
        if node.kind == "alias" and node.target is not None and id(node.target) in self.changed:
            if canonical.same(self.changed[id(node.target)], new):
                self.kept_aliases.add(id(node))
                return []
        self.changed[id(node)] = new
        if node.kind == "mapping" and isinstance(old, dict) and isinstance(new, dict) and set(old) <= set(new):
            return self._mapping_edits(node, old, new)
        if node.kind == "sequence" and isinstance(old, list) and isinstance(new, list) and len(old) == len(node.items):
            # Items are edited in place when the length stays, or a block sequence grows or shrinks (not to or from empty).
            if len(new) == len(old) or (not node.flow and old and new):
                return self._sequence_edits(node, old, new)
        return [_replace(self.text, node, new)]

    def _mapping_edits(self, node: yamltext.Node, old: dict[str, JsonValue], new: dict[str, JsonValue]) -> list[Edit]:
        """Each old key's value edited in place; new keys appended (a flow mapping is re-emitted whole)."""
        edits: list[Edit] = []
        for key, value in old.items():
            child = node.get(key)
            if child is None:
                raise EditError(f"line {node.line}: key {key!r} is not written in place (a merge key?)")
            edits.extend(self.value_edits(child, value, new[key]))
        added = {key: value for key, value in new.items() if key not in old}
        if added and node.flow:
            return [_replace(self.text, node, new)]
        if added:
            # New keys go after the last entry, at the column of the existing keys.
            edits.append(Edit(node.end, node.end, "\n" + block(added, node.keys[0].column, indent_first=True)))
        return edits

    def _sequence_edits(self, node: yamltext.Node, old: list[JsonValue], new: list[JsonValue]) -> list[Edit]:
        """The items both lists have edited in place, then the items added or cut."""
        common = min(len(old), len(new))
        edits = [
            edit
            for child, before, after in zip(node.items[:common], old[:common], new[:common], strict=True)
            for edit in self.value_edits(child, before, after)
        ]
        return edits + self._resize_block_sequence(node, new, common)

    def _resize_block_sequence(self, node: yamltext.Node, new: list[JsonValue], common: int) -> list[Edit]:
        """Append the new items after the last one, or cut the items past ``common``."""
        if len(new) < len(node.items):
            return [Edit(node.items[common - 1].end, node.end, "")]
        if len(new) == len(node.items):
            return []
        first = node.items[0]
        dash = self.text.rfind("-", 0, first.start)
        dash_column = dash - (self.text.rfind("\n", 0, dash) + 1)
        lead = " " * dash_column + "-" + " " * max(first.column - dash_column - 1, 1)
        added = "".join("\n" + lead + block(item, first.column, indent_first=False) for item in new[common:])
        return [Edit(node.end, node.end, added)]


def _replace(text: str, node: yamltext.Node, value: JsonValue) -> Edit:
    """Re-emit one node; an alias is replaced by the value itself, never by editing its anchor."""
    if node.kind == "scalar" and node.style in ('"', "'") and isinstance(value, str):
        # Keep the author's quoting; JSON's double-quoted string is a valid YAML one.
        return Edit(node.start, node.end, json.dumps(value, ensure_ascii=False))
    if node.in_flow or not (isinstance(value, dict | list) and value):
        return Edit(node.start, node.end, inline(value))
    line_start = text.rfind("\n", 0, node.start) + 1
    if _LINE_START.fullmatch(text[line_start : node.start]):
        # The node opens its own line (or follows "- "): continue the block at its column.
        return Edit(node.start, node.end, block(value, node.column, indent_first=False))
    # The node follows its key on the same line (`key: *alias`, `key: {...}`): a block must start below.
    indent = (node.key.column if node.key is not None else node.column) + 2
    start = node.start
    while start > line_start and text[start - 1] == " ":
        start -= 1
    return Edit(start, node.end, "\n" + block(value, indent, indent_first=True))


def inline(value: JsonValue) -> str:
    """``value`` as one line of flow YAML, valid both in block and in flow context."""
    # Inside a one-item flow sequence, a scalar is written as flow context requires.
    body = _dump([value], flow=True).strip()[1:-1]
    if "\n" in body:
        raise EditError(f"cannot write {body[:40]!r}… on one line")
    return body


def block(value: JsonValue, indent: int, indent_first: bool) -> str:
    """``value`` as block YAML whose lines (after the first, unless ``indent_first``) start at ``indent``."""
    lines = _dump(value, flow=False).rstrip("\n").split("\n")
    pad = " " * indent
    first = pad + lines[0] if indent_first else lines[0]
    return "\n".join([first, *(pad + line for line in lines[1:])])


def apply(text: str, document: yamltext.Document, edits: list[Edit], kept_aliases: set[int] | None = None) -> str:
    """Apply non-overlapping edits; refuse one that would change an anchored value that an alias still uses."""
    ordered = sorted(edits, key=lambda edit: edit.start)
    for earlier, later in itertools.pairwise(ordered):
        if later.start < earlier.end:
            raise EditError("overlapping edits")

    def edited(start: int, end: int) -> bool:
        return any(edit.start < end and start < edit.end for edit in ordered)

    # An alias elsewhere would silently follow an edit made inside (or over) its anchored value.
    for alias in document.aliases:
        target = alias.target
        if target is None or id(alias) in (kept_aliases or set()) or edited(alias.start, alias.end):
            continue
        if edited(target.start, max(target.end, target.start + 1)):
            raise EditError(
                f"the value anchored as &{target.anchor} at line {target.line} changes, but line {alias.line} "
                f"uses it (*{target.anchor}) where the value must stay; write it out in full there by hand first"
            )
    for edit in reversed(ordered):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text
