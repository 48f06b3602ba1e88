"""A protocol server that serves the reference, but puts hostile text into what it says.

Usage: python tests/support/fakes/hostile_text.py MODE [SIZE]
       python tests/support/fakes/hostile_text.py FOLDER     (a batch's submission: its ``mode`` file holds ``MODE [SIZE]``)
Modes (each applies to every operation; the handshake and ``stop`` stay correct):
  big-wrong-type   the observation's value is an object holding a SIZE-character string
                   (the observation schema fails, and its error would quote the whole value)
  big-observation  the observation is not an object but a SIZE-character string (the protocol schema fails)
  big-threw        the implementation "threw" a SIZE-character message
  big-key          the correct observation with an extra key of SIZE characters
  ok               the reference, correctly
  surrogate        the value of text_of is a string holding a lone surrogate (sent as the JSON escape \\ud800);
                   every other operation is answered correctly
  surrogate-threw  every operation "threw" a message holding a lone surrogate
  escapes          the implementation's name, and what it "threw", carry terminal escape sequences
  markdown         what it "threw" is Markdown: a fake heading, a fake total table, a fence closer
  xml-forbidden    what it "threw" holds U+FFFE, U+FFFF, a NUL and other characters XML 1.0 cannot hold
SIZE defaults to 1,000,000.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from conformance.adapters.reference import create
from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.server import answer

#: Hyperlink (OSC 8), clear screen, window title, clipboard write (OSC 52), a carriage-return overwrite, a bell.
ESCAPES = (
    "\x1b]8;;https://evil.example/\x07click me\x1b]8;;\x07"
    "\x1b[2J\x1b[H"
    "\x1b]0;pwned title\x07"
    "\x1b]52;c;cm0gLXJmIH4=\x07"
    "all good\rEVERYTHING PASSED\x9b31m\x7f"
)
#: Closes a code fence (up to three spaces of indent are allowed), then forges a heading and a total table.
MARKDOWN = "   ``````\n\n# Total: 100.00 / 100.00\n\n| lab | points |\n|---|---:|\n| total | 100.00 / 100.00 |\n"
#: Closes an inline code span, then forges a heading.
MARKDOWN_NAME = "student`\n\n# Total: 100.00 / 100.00\n\n`"
XML_FORBIDDEN = "bad \ufffe and \uffff and \x00 and \x01 and \x1b and \ud800 end"


def _threw(seq: object, message: str) -> str:
    return json.dumps({"seq": seq, "ok": False, "error": {"kind": "threw", "message": message}})


def _with_value(correct: JsonObject, value: JsonValue) -> str:
    """The correct response with its observation's ``value`` replaced (other keys, such as ``input_unchanged``, kept)."""
    observation = correct.get("observation")
    if isinstance(observation, dict) and "value" in observation:
        observation["value"] = value
    return json.dumps(correct)


#: The modes whose every answer is a "threw" error, and its message (for a SIZE).
_THREW_MESSAGES: dict[str, Callable[[int], str]] = {
    "big-threw": lambda size: "A" * size,
    "surrogate-threw": lambda size: "TypeError: \ud800 lone",
    "escapes": lambda size: f"TypeError: {ESCAPES}",
    "markdown": lambda size: MARKDOWN,
    "xml-forbidden": lambda size: XML_FORBIDDEN,
}


def hostile(mode: str, size: int, request: JsonObject, correct: JsonObject) -> str | None:
    """The hostile response line for ``request`` (``correct`` is the reference's); None to answer it correctly."""
    seq, op = request.get("seq"), request.get("op")
    if mode in _THREW_MESSAGES:
        return _threw(seq, _THREW_MESSAGES[mode](size))
    if mode == "surrogate":
        # json.dumps writes the lone surrogate as the escape \ud800, exactly as a JavaScript program would.
        return _with_value(correct, "text \ud800 here") if op == "text_of" else None
    return _big_observation(mode, size, seq, correct)


def _big_observation(mode: str, size: int, seq: JsonValue, correct: JsonObject) -> str | None:
    """The answer of a ``big-*`` mode that puts SIZE characters into the observation; None for any other mode."""
    if mode == "big-wrong-type":
        return _with_value(correct, {"text": "A" * size})
    if mode == "big-observation":
        return json.dumps({"seq": seq, "ok": True, "observation": "A" * size})
    if mode == "big-key":
        observation = correct.get("observation")
        if isinstance(observation, dict):
            observation["K" * size] = 1
        return json.dumps(correct)
    return None


def main() -> None:
    arguments = sys.argv[1:]
    if Path(arguments[0]).is_dir():
        arguments = (Path(arguments[0]) / "mode").read_text(encoding="utf-8").split()
    mode = arguments[0]
    size = int(arguments[1]) if len(arguments) > 1 else 1_000_000
    adapter = create()
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        op = request.get("op")
        answered = answer(adapter, request)
        response = None if op in ("hello", "stop") else hostile(mode, size, request, answered)
        if response is None:
            if op == "hello" and mode in ("escapes", "markdown"):
                name = f"student{ESCAPES}" if mode == "escapes" else MARKDOWN_NAME
                answered["implementation"] = {"name": name, "version": "1"}
            response = json.dumps(answered)
        out.write(response + "\n")
        out.flush()
        if op == "stop":
            return


if __name__ == "__main__":
    main()
