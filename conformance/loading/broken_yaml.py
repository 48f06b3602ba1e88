"""The cases of a fixture file that YAML cannot parse, read from its text line by line.

A file that fails to parse must not make its cases vanish from the totals: each case id found
textually (``- id: ...``), with the ``lab:`` written under it, becomes a broken entry of its
own, so a report says "lab 4.1: 20 errored" rather than "lab ?: 1 errored".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conformance.model.cases import LABS

_ID = re.compile(r"""^(?P<indent>\s*)-\s+id:\s*["']?(?P<id>[A-Za-z0-9][A-Za-z0-9_.:-]*)["']?\s*(?:#.*)?$""")
_LAB = re.compile(r"""^\s+lab:\s*["']?(?P<lab>\d+\.\d+)["']?\s*(?:#.*)?$""")
_CHAPTER = re.compile(r"""^chapter:\s*["']?(?P<chapter>\d+)["']?\s*(?:#.*)?$""")


@dataclass(frozen=True)
class TextualCase:
    """A case entry found in the text: its id, line and lab (when written plainly)."""

    id: str
    line: int
    lab: str | None


def textual_cases(text: str) -> tuple[str | None, list[TextualCase]]:
    """The file's chapter and its case entries, found without parsing the YAML."""
    chapter: str | None = None
    found: list[tuple[str, int, list[str]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if chapter is None and (match := _CHAPTER.match(line)):
            chapter = match["chapter"]
        if match := _ID.match(line):
            found.append((match["id"], number, []))
        elif found and (lab := _LAB.match(line)):
            found[-1][2].append(lab["lab"])
    cases = [TextualCase(case_id, line, labs[0] if labs and labs[0] in LABS else None) for case_id, line, labs in found]
    return chapter, cases


def without_entry_at(text: str, line: int) -> tuple[str, list[TextualCase]] | None:
    """The text with the case entry holding ``line`` blanked out, and the cases found in it; None when no entry holds it.

    An entry is a list item at the indentation of the file's ``- id:`` lines, whatever it holds
    (``- id: [unclosed`` too). Its lines are emptied, not removed, so every other line keeps its
    number: the cases before and after the mistake can then be parsed and checked where they are
    written. An error reported on an entry's first line may come from the end of the entry before
    it (a quote never closed), so that one is blanked too.
    """
    lines = text.split("\n")
    _, entries = textual_cases(text)
    first_id = _ID.match(lines[entries[0].line - 1]) if entries else None
    if first_id is None:
        return None
    item = f"{first_id['indent']}- "
    starts = [number for number, written in enumerate(lines, start=1) if written.startswith(item)]
    holding = [index for index, start in enumerate(starts) if start <= line]
    if not holding:
        return None
    index = holding[-1]
    first = index - 1 if starts[index] == line and index > 0 else index
    begin = starts[first] - 1
    end = starts[index + 1] - 1 if index + 1 < len(starts) else len(lines)
    blanked = [entry for entry in entries if begin < entry.line <= end]
    return "\n".join(lines[:begin] + [""] * (end - begin) + lines[end:]), blanked
