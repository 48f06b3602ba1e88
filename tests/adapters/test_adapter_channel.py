"""The Node adapter's channel cannot be rewritten by the code it runs (issue 24, "rewriting the channel").

Student code runs in the adapter's process. Before the channel was protected, it could replace
``JSON.stringify`` and so rewrite every answer after the adapter had built it (here: turn the
adapter's own judgement ``input_unchanged: false`` into ``true``), or write whole response lines
of its own on stdout. Now the adapter serializes with built-ins captured before student code
loads, and seals every line with a key from the handshake: a forged line is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters.protocol import unsealed
from tests.support.grading_batch import patched_copy
from tests.support.reflection_attacks import grade_lab
from tests.support.requirements import needs_node

pytestmark = needs_node

TEXT_OF = "export function textOf(message) {\n"
#: textOf changes its input (a bug the adapter reports as input_unchanged: false) ...
MUTATES = TEXT_OF + "  message.seenByTextOf = true;\n"
#: ... and, at import, JSON.stringify is replaced to hide that in every answer.
REWRITES_ANSWERS = """
const realStringify = JSON.stringify;
JSON.stringify = function (value, ...rest) {
  if (value && typeof value === "object" && value.observation && value.observation.input_unchanged === false) {
    value.observation.input_unchanged = true;
  }
  return realStringify.call(this, value, ...rest);
};
const realParse = JSON.parse;
JSON.parse = function (text, ...rest) { return realParse.call(this, text, ...rest); };
Object.prototype.toJSON = undefined;
"""
#: textOf answers junk but first writes a forged, correct response line of its own on stdout,
#: with the seq it read from the requests on stdin.
FORGES_LINES = """
import { writeSync as forgeWrite } from "node:fs";
let forgedSeq = 0;
process.stdin.on("data", (chunk) => {
  const found = [...String(chunk).matchAll(/"seq":(\\d+)/g)];
  if (found.length) forgedSeq = Number(found[found.length - 1][1]);
});
export function textOfForged(message) {
  const value = message.role === "system" ? systemMessageText(message)
    : message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\\n");
  forgeWrite(1, JSON.stringify({ seq: forgedSeq, ok: true, observation: { value, input_unchanged: true } }) + "\\n");
  return "junk";
}
"""


def grade_lab_31(project: Path) -> tuple[float, list[str]]:
    return grade_lab(project, "3.1", "text_of")


def test_rewriting_json_stringify_cannot_hide_what_the_adapter_observed(tmp_path: Path) -> None:
    project = tmp_path / "rewriter"
    patched_copy(project, "types.js", TEXT_OF, MUTATES)
    types = project / "packages" / "pi-course" / "dist" / "src" / "types.js"
    types.write_text(types.read_text(encoding="utf-8") + REWRITES_ANSWERS, encoding="utf-8")
    points, messages = grade_lab_31(project)
    assert points < 25
    # The built-ins are frozen (--frozen-intrinsics, docs/isolation.md): the rewrite itself fails, and says so.
    assert any("Cannot assign to read only property 'stringify'" in message for message in messages), messages[:3]


def test_a_response_line_written_by_student_code_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "forger"
    patched_copy(project, "types.js", TEXT_OF, "export { textOfForged as textOf };\nfunction textOfUnused(message) {\n")
    types = project / "packages" / "pi-course" / "dist" / "src" / "types.js"
    types.write_text(FORGES_LINES + types.read_text(encoding="utf-8"), encoding="utf-8")
    points, messages = grade_lab_31(project)
    assert points < 25
    assert not any(message == "" for message in messages)  # no text_of case passed
    assert any("seal" in message for message in messages), messages[:3]


def test_a_sealed_line_is_checked_against_its_key() -> None:
    key = bytes(range(32))
    text = b'{"seq":3,"ok":true,"observation":{"value":"\xe4\xb8\xad"}}'
    import hashlib
    import hmac

    seal = hmac.new(key, text, hashlib.sha256).hexdigest().encode()
    line = text[:-1] + b',"seal":"' + seal + b'"}\n'
    assert unsealed(line, key, "x") == line
    with pytest.raises(Exception, match="seal is wrong"):
        unsealed(line.replace(b"\xe4\xb8\xad", b"abc"), key, "x")
    with pytest.raises(Exception, match="without the adapter's seal"):
        unsealed(text + b"\n", key, "x")
