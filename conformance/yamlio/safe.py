"""Parse YAML from files a stranger may have written, within bounds.

PyYAML keeps an alias as a reference to its anchor's node, so a "billion laughs" file of a
few lines composes instantly but expands to billions of values as soon as anything walks
it (the JSON checks, the schema validator). Deep nesting has the same effect on Python's
stack. :func:`compose` therefore measures the composed document, counting every node as
often as aliases repeat it and its depth, and refuses one beyond :data:`MAX_NODES` or
:data:`MAX_DEPTH` before anything walks it. Every fixture, rubric and baseline is read
through here.
"""

from __future__ import annotations

import yaml

#: Values in one document, counting each alias as a copy of its anchor (the bundled fixture
#: files hold at most a few thousand).
MAX_NODES = 200_000
#: Nesting levels in one document (the bundled fixtures use about 15).
MAX_DEPTH = 100

# libyaml's parser when PyYAML was built with it: several times faster.
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlLimitError(yaml.YAMLError):
    """A document too large once its aliases are expanded, too deep, or recursive."""


def compose(text: str, loader: type[yaml.SafeLoader] = LOADER) -> yaml.Node | None:
    """The document's node tree, checked against the limits (:class:`YamlLimitError`)."""
    try:
        node = yaml.compose(text, Loader=loader)
    except RecursionError as error:  # the pure-Python composer on very deep nesting
        raise YamlLimitError(f"nested more than {MAX_DEPTH} levels deep") from error
    if node is not None:
        _measure(node, 1, {}, set())
    return node


def load(text: str, loader: type[yaml.SafeLoader] = LOADER) -> object:
    """The document's data, as ``yaml.safe_load`` would give it, within the limits."""
    node = compose(text, loader)
    return yaml.constructor.SafeConstructor().construct_document(node) if node is not None else None


def _measure(node: yaml.Node, depth: int, memo: dict[int, tuple[int, int]], active: set[int]) -> tuple[int, int]:
    """``(values, height)`` of ``node``, aliases expanded; memoized, so shared nodes cost once."""
    if depth > MAX_DEPTH:
        raise YamlLimitError(f"nested more than {MAX_DEPTH} levels deep (line {node.start_mark.line + 1})")
    key = id(node)
    if key in memo:
        size, height = memo[key]
        if depth + height > MAX_DEPTH:
            raise YamlLimitError(f"nested more than {MAX_DEPTH} levels deep (line {node.start_mark.line + 1})")
        return size, height
    if key in active:
        raise YamlLimitError(f"an alias refers to a value that contains it (line {node.start_mark.line + 1})")
    children: list[yaml.Node] = []
    if isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    elif isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    active.add(key)
    size, height = 1, 0
    for child in children:
        child_size, child_height = _measure(child, depth + 1, memo, active)
        size += child_size
        height = max(height, child_height + 1)
        if size > MAX_NODES:
            raise YamlLimitError(
                f"more than {MAX_NODES} values once its aliases are expanded (a billion-laughs file?) (line {node.start_mark.line + 1})"
            )
    active.discard(key)
    memo[key] = (size, height)
    return size, height
