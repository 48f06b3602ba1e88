"""Cases and packages the reference fails on purpose, or a fork fails and upstream would not: for "[check the case]"'s tests."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fixture_scratch import scratch

EXHAUSTION = "ch04/exhaustion.yaml"
CASE = "sm-exhaust-empty-script-single-error"
SPEC_QUOTE = "ScriptedModel 没有更多响应"


def wrong_expectation(tmp_path: Path) -> Path:
    """A scratch suite whose exhaustion case expects an English message (the spec quotes the Chinese one
    exactly), with the deciding clause cited last."""
    root = scratch(tmp_path, {EXHAUSTION: [CASE], "ch03/constructors.yaml": ["make-text-empty"]})
    path = root / EXHAUSTION
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "clauses: [SM-EXHAUST-1, SM-DEFER-1, SM-REQ-1, AMS-2, STREAM-3]", "clauses: [SM-DEFER-1, SM-REQ-1, AMS-2, STREAM-3, SM-EXHAUST-1]"
    )
    path.write_text(text.replace(f'errorMessage: "{SPEC_QUOTE}"', 'errorMessage: "ScriptedModel has no more responses"'), encoding="utf-8")
    return root


UPSTREAM, VERSION = "@earendil-works/pi-ai", "1.6.0"
# Wrong on purpose: the separator is ignored, so the joined content_text cases fail.
WRONG_CONTENT_TEXT = """\
export function contentText(content) {
  if (typeof content === "string") return content;
  return content.filter((block) => block.type === "text").map((block) => block.text).join("");
}
"""


def package(folder: Path, name: str = UPSTREAM, version: str = VERSION) -> Path:
    """A package folder named ``name`` at ``version`` whose contentText ignores the separator (WRONG_CONTENT_TEXT)."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"name": name, "version": version, "type": "module", "main": "index.js"}
    (folder / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "index.js").write_text(WRONG_CONTENT_TEXT, encoding="utf-8")
    return folder
