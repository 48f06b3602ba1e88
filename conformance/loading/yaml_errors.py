"""A YAML parser error in words for fixture authors: where it is, what the parser saw, and its likely cause.

PyYAML says where it gave up ("line 4, column 13") and what it expected there ("expected
<block end>, but found '<scalar>'"), which rarely names the mistake. The usual mistakes in
hand-written fixtures are few: an apostrophe that ends a single-quoted string, a ``: `` in an
unquoted value, a tab, an indentation that does not match its siblings, a bracket never
closed. Each is recognised from the error and the text of the line it points at.
"""

from __future__ import annotations

import re
from typing import Any

_QUOTED_START = re.compile(r"""^\s*(?:-\s+)?(?:[\w$.-]+:\s+)?(?P<quote>['"])""")


def describe(error: Any, text: str) -> str:
    """One line: ``not valid YAML at line L, column C: what the parser saw; likely cause: ...``."""
    problem = str(getattr(error, "problem", None) or " ".join(str(error).split()))
    mark = getattr(error, "problem_mark", None)
    if mark is None:
        return f"not valid YAML: {problem}"
    lines = text.split("\n")
    line_text = lines[mark.line] if mark.line < len(lines) else ""
    previous = next((line for line in reversed(lines[: mark.line]) if line.strip() and not line.lstrip().startswith("#")), "")
    where = f"not valid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    cause = likely_cause(problem, str(getattr(error, "context", "") or ""), line_text, previous, mark.column)
    return f"{where}; likely cause: {cause}" if cause else where


def likely_cause(problem: str, context: str, line: str, previous: str, column: int) -> str | None:
    """The usual mistake that gives this error at ``column`` of this line, or None when none fits."""
    if "\t" in problem or "\t" in line[: len(line) - len(line.lstrip())]:
        return "a tab character; YAML indents with spaces only"
    if "flow" in context and "<stream end>" in problem:
        return "a [ or { that is never closed; close it, or put the text in quotes"
    quote = _QUOTED_START.match(line)
    if "but found '<scalar>'" in problem and quote is not None:
        if quote["quote"] == "'":
            return "an apostrophe inside a single-quoted string ends the string; write it twice ('') or use double quotes"
        return 'a double quote inside a double-quoted string ends the string; write it as \\" or use single quotes'
    if problem.startswith("mapping values are not allowed"):
        # At the line's own key: the key itself is misplaced; further on: a ": " inside its value.
        if column == line.find(": ") and _key_column(line) > _key_column(previous) and _is_plain_pair(previous):
            return "this line is indented deeper than the key above it, which already has a value; line its key up with that key"
        return "a colon followed by a space inside an unquoted value; put the whole value in quotes"
    if "expected <block end>" in problem or "did not find expected" in problem or "bad indentation" in problem:
        return "the indentation of this line does not match the lines around it; keys of one mapping start in the same column"
    return None


def _key_column(line: str) -> int:
    """The column a line's key starts at (after a ``- `` that opens a list item)."""
    indent = len(line) - len(line.lstrip(" "))
    return indent + 2 if line.lstrip(" ").startswith("- ") else indent


def _is_plain_pair(line: str) -> bool:
    """``key: value`` with a value on the same line (not a ``key:`` that opens a block)."""
    key, separator, value = line.strip().removeprefix("- ").partition(": ")
    return bool(separator and key and value.strip() and not value.strip().startswith(("|", ">", "&", "#")))
