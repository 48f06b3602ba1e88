"""One fixture file read and parsed, or the broken entries that say why it could not be.

A file that cannot be read or parsed still accounts for its cases: each id found in its text
becomes a broken entry (:mod:`conformance.loading.broken_yaml`), so no case vanishes from a report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.loading import yaml_errors
from conformance.model.cases import BrokenCase, Case
from conformance.model.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:  # yaml is imported only when a file misses the parsed cache
    import yaml

#: Inside :func:`parsed_once`, each text's parse (its node tree and data, or its YAML error).
_parsed: dict[str, tuple[yaml.Node | None, object] | BaseException] | None = None


@contextmanager
def parsed_once() -> Iterator[None]:
    """Inside this block a fixture text is parsed once, however many readers ask for it.

    ``fixtures lint`` loads the tree once per profile and reads every file's lines for its own
    checks: without this, each file was parsed three times. The parses are shared, so no reader
    may change the data (none does); they are dropped when the block ends.
    """
    global _parsed
    outer = _parsed
    _parsed = {} if outer is None else outer
    try:
        yield
    finally:
        _parsed = outer


def parse_text(text: str) -> tuple[yaml.Node | None, object]:
    """The text's node tree (within the limits of :mod:`conformance.yamlio.safe`) and the data built from it.

    Raises what parsing raises (``yaml.YAMLError``, ``RecursionError``), the same error again
    for the same text inside :func:`parsed_once`.
    """
    import yaml

    from conformance.yamlio import safe as yamlsafe

    known = _parsed.get(text) if _parsed is not None else None
    if isinstance(known, BaseException):
        raise known
    if known is not None:
        return known
    try:
        node = yamlsafe.compose(text)
        # Built from the composed node, so the text is parsed once for both data and lines.
        data = yaml.constructor.SafeConstructor().construct_document(node) if node is not None else None
    except (yaml.YAMLError, RecursionError) as error:
        if _parsed is not None:
            _parsed[text] = error
        raise
    if _parsed is not None:
        _parsed[text] = (node, data)
    return node, data


class NodeLines:
    """Line numbers of the nodes of a composed YAML document, looked up by path."""

    def __init__(self, node: yaml.Node | None) -> None:
        self._root = node

    def line(self, path: Iterable[str | int]) -> int:
        """The line of the node at ``path``, or of its deepest ancestor that exists (1 for an empty file)."""
        import yaml

        node = self._root
        line = node.start_mark.line + 1 if node is not None else 1
        for part in path:
            child: yaml.Node | None = None
            key_line: int | None = None
            if isinstance(node, yaml.MappingNode):
                pair = next(((key, value) for key, value in node.value if key.value == part), None)
                if pair is not None:
                    # A problem about a key (a typo) is on the key's line, not its block value's.
                    key_line, child = pair[0].start_mark.line + 1, pair[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                child = node.value[part]
            if child is None:
                break
            node = child
            line = key_line if key_line is not None else node.start_mark.line + 1
        return line


@dataclass(frozen=True)
class Damage:
    """A file YAML cannot parse, read with the case entries around the error blanked out."""

    #: The YAML error in words, said for every case of the file.
    problem: str
    #: The line the error is at.
    line: int
    #: The blanked entries, each reported with the error (by the default profile's load only).
    blanked: tuple[BrokenCase, ...]

    def spoil(self, entry: Case | BrokenCase) -> BrokenCase:
        """A case read from around the error: broken (the file is unusable), with its own problems and the error."""
        if isinstance(entry, Case):
            return BrokenCase(entry.id, entry.file, entry.line, (self.problem,), entry.lab, entry.chapter, entry.profile, (self.line,))
        lines = entry.problem_lines if len(entry.problem_lines) == len(entry.problems) else (entry.line,) * len(entry.problems)
        return replace(entry, problems=(*entry.problems, self.problem), problem_lines=(*lines, self.line))


@dataclass(frozen=True)
class ReadFile:
    """A fixture file's text, its data as YAML builds it, and the line of each of its nodes.

    For a file YAML cannot parse, ``damage`` says why and the rest describes the text with the
    entries around the error blanked out, so that its other cases are still checked.
    """

    text: str
    data: object
    lines: NodeLines
    damage: Damage | None = None


def read_fixture_file(path: Path, relative: str, profile: str) -> ReadFile | list[BrokenCase]:
    """The file parsed, or the broken entries that report why it could not be (none for a repeat report).

    A problem that concerns the file whatever its profile is reported by the default profile's
    load only, so `fixtures lint` shows it once.
    """
    import yaml

    from conformance.yamlio import safe as yamlsafe

    stem_id = f"{path.stem}::file"
    reported_here = profile == DEFAULT_PROFILE
    try:
        text = path.read_text(encoding="utf-8")
        # Bounded: a billion-laughs or 1000-level file is one problem, not a hang or a RecursionError.
        node, data = parse_text(text)
    except UnicodeDecodeError as error:
        problem = f"cannot read the file: it is not UTF-8 text ({error.reason} at byte {error.start})"
        return [BrokenCase(stem_id, relative, 1, (problem,))] if reported_here else []
    except OSError as error:
        return [BrokenCase(stem_id, relative, 1, (f"cannot read the file: {error}",))] if reported_here else []
    except yamlsafe.YamlLimitError as error:
        return [BrokenCase(stem_id, relative, 1, (f"refused: the YAML is {error}",))]
    except yaml.YAMLError as error:
        recovered = _recovered(error, text, relative, reported_here)
        if recovered is not None:
            return recovered
        return list(_unparsable_file_entries(error, text, stem_id, relative)) if reported_here else []
    return ReadFile(text, data, NodeLines(node))


def _recovered(error: yaml.YAMLError, text: str, relative: str, reported_here: bool) -> ReadFile | None:
    """The file read without the case entries around a YAML error, when the rest parses and holds cases."""
    import yaml

    from conformance.loading import broken_yaml

    mark = getattr(error, "problem_mark", None)
    if mark is None:
        return None
    line = mark.line + 1
    found = broken_yaml.without_entry_at(text, line)
    if found is None:
        return None
    rest, blanked = found
    try:
        node, data = parse_text(rest)
    except (yaml.YAMLError, RecursionError):
        return None
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list) or not cases:
        return None
    problem = f"{yaml_problem(error, text)} (the whole file is unusable, so each of its cases is reported)"
    chapter, _ = broken_yaml.textual_cases(text)
    entries = tuple(
        BrokenCase(
            entry.id,
            relative,
            entry.line,
            (problem,),
            entry.lab,
            chapter or (f"0{entry.lab[0]}" if entry.lab else None),
            problem_lines=(line,),
        )
        for entry in blanked
    )
    return ReadFile(rest, data, NodeLines(node), Damage(problem, line, entries if reported_here else ()))


def _chapter_of(lab: str | None) -> str | None:
    return f"0{lab[0]}" if lab else None


def _unparsable_file_entries(error: yaml.YAMLError, text: str, stem_id: str, relative: str) -> Iterator[BrokenCase]:
    """A file YAML cannot parse: each case id found in its text is reported broken, in its lab."""
    from conformance.loading import broken_yaml

    mark = getattr(error, "problem_mark", None)
    line = mark.line + 1 if mark is not None else 1
    problem = yaml_problem(error, text)
    chapter, entries = broken_yaml.textual_cases(text)
    if not entries:
        yield BrokenCase(stem_id, relative, line, (problem,), problem_lines=(line,))
    for entry in entries:
        message = f"{problem} (the whole file is unusable, so each of its cases is reported)"
        # A shared file names its chapter inside `course: {...}`; a lab names its chapter too.
        entry_chapter = chapter or (f"0{entry.lab[0]}" if entry.lab else None)
        yield BrokenCase(entry.id, relative, entry.line, (message,), entry.lab, entry_chapter, problem_lines=(line,))


def yaml_problem(error: yaml.YAMLError, text: str) -> str:
    """A YAML error in one line, with its likely cause; a duplicate anchor (a copied case) says how to fix it."""
    problem = yaml_errors.describe(error, text)
    mark = getattr(error, "problem_mark", None)
    first = getattr(error, "context_mark", None)
    if "found duplicate anchor" in str(error) and mark is not None and first is not None:
        line_text = text.split("\n")[mark.line] if mark.line < len(text.split("\n")) else ""
        found = re.match(r"&([^\s,\[\]{}]+)", line_text[mark.column :])
        name = found[1] if found else "…"
        problem = (
            f"not valid YAML: duplicate anchor &{name} (first defined at line {first.line + 1}); anchors are per file, "
            f"so a copied case needs its own: rename &{name} and its *{name} aliases in the copy"
        )
    return problem
