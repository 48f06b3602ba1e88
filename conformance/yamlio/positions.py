"""Where each node of a YAML document sits in its text, for line numbers and in-place edits.

Built from PyYAML's *event* stream rather than its composed node graph: composing resolves
an alias to the anchored node, so the alias's own position would be lost, and an edit must
know whether a value is written in place or borrowed from an anchor elsewhere in the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import yaml

from conformance.common.value_paths import join_index, join_key

NodeKind = Literal["scalar", "mapping", "sequence", "alias"]
# libyaml's parser when PyYAML has it (about ten times faster); its marks count characters too.
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(eq=False)
class Node:
    """One node of the document: its kind, its span in the text and its children."""

    kind: NodeKind
    start: int
    end: int = 0
    line: int = 0
    column: int = 0
    flow: bool = False
    in_flow: bool = False
    anchor: str | None = None
    text: str | None = None
    style: str | None = None
    target: Node | None = None
    items: list[Node] = field(default_factory=list)
    keys: list[Node] = field(default_factory=list)
    parent: Node | None = None
    key: Node | None = None

    def get(self, name: str) -> Node | None:
        """The value node of key ``name`` in a mapping node, if present."""
        if self.kind != "mapping":
            return None
        for key, value in zip(self.keys, self.items, strict=True):
            if key.text == name:
                return value
        return None

    def item(self, index: int) -> Node | None:
        """Item ``index`` of a sequence node, if present."""
        return self.items[index] if self.kind == "sequence" and 0 <= index < len(self.items) else None

    def walk(self) -> Iterator[Node]:
        """This node and every node written inside it (aliases are not followed)."""
        yield self
        for key in self.keys:
            yield from key.walk()
        for child in self.items:
            yield from child.walk()


@dataclass
class Document:
    """The root node of a document, and every alias in it (to find who uses an anchor)."""

    root: Node | None
    aliases: list[Node]


def parse(text: str) -> Document:
    """Parse the first document of ``text`` into positioned nodes; raise ``yaml.YAMLError`` if invalid."""
    builder = _Builder(text)
    for event in yaml.parse(text, Loader=LOADER):
        if isinstance(event, yaml.DocumentEndEvent):
            break
        if event.start_mark is None or event.end_mark is None:  # the parsers always set marks; the stubs allow None
            continue
        if isinstance(event, yaml.ScalarEvent | yaml.AliasEvent | yaml.CollectionStartEvent):
            builder.start(event)
        elif isinstance(event, yaml.CollectionEndEvent):
            builder.end(event)
    return Document(builder.root, builder.aliases)


_NodeEvent = yaml.ScalarEvent | yaml.AliasEvent | yaml.CollectionStartEvent


@dataclass
class _Builder:
    """The tree of positioned nodes, built from the parser's events one by one."""

    text: str
    root: Node | None = None
    aliases: list[Node] = field(default_factory=list)
    #: The collections open around the current event, innermost last.
    stack: list[Node] = field(default_factory=list)
    anchors: dict[str, Node] = field(default_factory=dict)
    #: Per open mapping (by id): the key whose value comes next, None when a key comes next.
    pending_key: dict[int, Node | None] = field(default_factory=dict)

    def start(self, event: _NodeEvent) -> None:
        """A scalar, an alias or the start of a collection: a new node in the open collection."""
        mark, end_mark = event.start_mark, event.end_mark
        assert mark is not None and end_mark is not None
        node = Node(_kind_of(event), mark.index, line=mark.line + 1, column=mark.column)
        if isinstance(event, yaml.AliasEvent):
            node.target = self.anchors.get(event.anchor or "")
            node.end = end_mark.index
            self.aliases.append(node)
        else:
            node.anchor = event.anchor
            if event.anchor:
                self.anchors[event.anchor] = node
        if isinstance(event, yaml.ScalarEvent):
            node.text = event.value
            node.style = event.style
            node.end = _trim_end(self.text, mark.index, end_mark.index)
        self.attach(node)
        if isinstance(event, yaml.CollectionStartEvent):
            node.flow = bool(event.flow_style)
            self.stack.append(node)

    def end(self, event: yaml.CollectionEndEvent) -> None:
        """The end of the innermost open collection."""
        assert event.end_mark is not None
        node = self.stack.pop()
        # A flow collection ends at its closing bracket; a block one where its last child ends.
        if node.flow:
            node.end = event.end_mark.index
        else:
            node.end = node.items[-1].end if node.items else _trim_end(self.text, node.start, event.end_mark.index)

    def attach(self, node: Node) -> None:
        """Put ``node`` in the open collection: an item, a mapping's key, or the value of the key before it."""
        if not self.stack:
            self.root = node
            return
        parent = self.stack[-1]
        node.parent = parent
        node.in_flow = parent.flow or parent.in_flow
        if parent.kind == "sequence":
            parent.items.append(node)
        elif self.pending_key.get(id(parent)) is None:
            parent.keys.append(node)
            self.pending_key[id(parent)] = node
        else:
            node.key = self.pending_key[id(parent)]
            parent.items.append(node)
            self.pending_key[id(parent)] = None


def _kind_of(event: _NodeEvent) -> NodeKind:
    if isinstance(event, yaml.ScalarEvent):
        return "scalar"
    if isinstance(event, yaml.AliasEvent):
        return "alias"
    return "mapping" if isinstance(event, yaml.MappingStartEvent) else "sequence"


def _trim_end(text: str, start: int, end: int) -> int:
    """Pull an end offset back over trailing blank space (block scalars end on the next line)."""
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def case_nodes(document: Document) -> list[Node]:
    """The nodes of the file's ``cases`` list, in order (empty when there is none)."""
    cases = document.root.get("cases") if document.root is not None else None
    return cases.items if cases is not None and cases.kind == "sequence" else []


def line_of(node: Node, path: list[str | int]) -> int:
    """Line of the deepest node along ``path`` below ``node`` (for problems inside a case)."""
    current = node
    for part in path:
        following = current.target if current.kind == "alias" and current.target is not None else current
        child = following.get(part) if isinstance(part, str) else following.item(part)
        if child is None:
            break
        current = child
    return current.line


def format_path(parts: list[str | int]) -> str:
    """A path in the runner's notation: ``steps[1].expect.events``."""
    path = ""
    for part in parts:
        path = join_index(path, part) if isinstance(part, int) else join_key(path, part)
    return path
