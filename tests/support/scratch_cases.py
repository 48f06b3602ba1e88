"""Scratch fixture files for loader and command-line tests (headers, one valid case, a writer), and a case built in code."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conformance.model.cases import Case

#: The header of a course fixture file (chapter 03), ending where the case list starts.
HEADER = 'chapter: "03"\ntopic: scratch\ncases:\n'
GOOD_CASE = """\
  - id: scratch-good
    lab: "3.1"
    clauses: [IR-TEXT-1]
    description: A valid case beside the broken ones.
    operation: text_of
    input:
      message: {role: user, content: [{type: text, text: hi}], timestamp: 1}
    expect: {value: hi, input_unchanged: true}
"""


def write(folder: Path, name: str, body: str) -> Path:
    """Write ``body`` (dedented) to ``folder/ch03/name`` and return its path."""
    path = folder / "ch03" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


#: The first line of a shared fixture file (``fixtures/shared/``): its schema.
SHARED_HEADER = "# yaml-language-server: $schema=https://pi-conformance.dev/schemas/shared-fixture-file.schema.json\n"


def shared_scratch(tmp_path: Path, text: str, name: str = "one.yaml") -> Path:
    """A fixtures folder under ``tmp_path`` holding one shared file ``shared/NAME`` of ``text`` (after its header)."""
    root = tmp_path / "fixtures"
    (root / "shared").mkdir(parents=True)
    (root / "shared" / name).write_text(SHARED_HEADER + text, encoding="utf-8")
    return root


#: The same valid case built in code, for tests of one stage that need a Case but no file.
TEXT_CASE = Case(
    id="t",
    file="scratch.yaml",
    line=1,
    chapter="03",
    lab="3.1",
    clauses=("IR-TEXT-1",),
    description="scratch",
    operation="text_of",
    input={"message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}},
    expect={"value": "hi", "input_unchanged": True},
)
