"""Student text made safe: bounded, valid Unicode, and inert wherever it is shown.

Everything a submission says is hostile, if only by accident: its answers, the messages it
throws, the name it gives itself, its build log, its folder's name. Before such text reaches
the grader's memory, a report, a terminal, a CSV cell or an XML file it goes through here:

* :func:`cap` cuts one field to a length, saying how much was left out; a :class:`Budget`
  bounds all the text of one submission together;
* :func:`decode_line` and :func:`scrub` replace invalid UTF-8 and lone UTF-16 surrogates
  (``"\\ud800"`` in a JSON answer) with U+FFFD, so nothing downstream fails to encode them;
* :func:`for_terminal` escapes control characters (ESC sequences, lone CR, C1, bidi overrides);
* :func:`markdown_fence` and :func:`markdown_code` keep text inside its code block or span;
* :func:`for_xml` replaces every character XML 1.0 cannot hold;
* :func:`csv_cell` neutralises spreadsheet formulas (OWASP: a leading ``'``);
* :func:`path_text` writes a file name's bytes that are not UTF-8 as ``\\xff`` escapes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jsonschema.exceptions import ValidationError

#: Characters of one quoted field: an outcome's message, a divergence's value, a name.
FIELD_LIMIT = 2_000
#: Characters of a short quotation of a value (a schema error's instance).
QUOTE_LIMIT = 120
#: Characters of student text kept for one submission, every case together.
SUBMISSION_LIMIT = 500_000
#: Once a submission's budget is spent, each further field is cut to this.
SPENT_FIELD_LIMIT = 200
#: Characters of a build log kept with a result (its reports and terminal show the start).
BUILD_LOG_LIMIT = 20_000
#: Characters of one string kept in a stored observation, and items kept of one array or object.
OBSERVATION_STRING_LIMIT = 2_000
OBSERVATION_ITEM_LIMIT = 1_000
#: Values (strings, numbers, containers...) kept of one stored observation in all.
OBSERVATION_NODE_LIMIT = 20_000

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB]")
# C0 but tab and newline, DEL, C1, and the bidirectional overrides and isolates (Trojan Source).
_TERMINAL_UNSAFE = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# Everything XML 1.0's Char production leaves out.
_XML_UNSAFE = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_BACKTICKS = re.compile("`+")
#: A CSV cell that starts with one of these is a formula to a spreadsheet (or, for ', hides a leading one).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def _escape(character: str) -> str:
    if character == "\r":
        return "\\r"
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def scrub(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (valid UTF-8 whatever it held)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def path_text(text: str) -> str:
    """A file or folder name (or a text quoting one) as valid Unicode, its undecodable bytes readable.

    Python holds a name's bytes that are not UTF-8 as surrogate escapes (``os.fsdecode``:
    byte ``0xff`` is ``"\\udcff"``), which no UTF-8 file can hold: each becomes ``\\xff``,
    so a gradebook, a report or a terminal line names the folder the way ``ls -b`` would.
    Any other lone surrogate becomes ``\\udXXX``.
    """
    return _SURROGATE.sub(_surrogate_text, text)


def _surrogate_text(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def decode_line(data: bytes) -> str:
    """Bytes a program wrote, as text: invalid UTF-8 (encoded surrogates included) becomes U+FFFD."""
    return data.decode("utf-8", errors="replace")


def may_hold_surrogates(json_text: str) -> bool:
    """True when JSON text has a ``\\uD800``-``\\uDFFF`` escape, which ``json.loads`` turns into a surrogate."""
    return "\\u" in json_text and _SURROGATE_ESCAPE.search(json_text) is not None


def scrub_json(value: Any) -> Any:
    """A decoded JSON value with every string (keys included) :func:`scrub`-bed; iterative, so any depth is fine."""
    if isinstance(value, str):
        return scrub(value)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = scrub(item)
        elif isinstance(item, list):
            stack.extend((item, index) for index in range(len(item)))
        elif isinstance(item, dict):
            if any(isinstance(name, str) and _SURROGATE.search(name) for name in item):
                renamed = {scrub(name): entry for name, entry in item.items()}
                item.clear()
                item.update(renamed)
            stack.extend((item, name) for name in item)
    return root[0]


def cap(text: str, limit: int = FIELD_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with a visible ``… [N more characters]`` when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def quote_value(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A short JSON quotation of a value (``repr`` for what JSON cannot say), for messages."""
    if isinstance(value, str) and len(value) > 4 * limit:
        value = value[: 4 * limit]  # the rest would be cut anyway: do not encode a megabyte to show a line
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (ValueError, RecursionError):
        text = repr(value)
    return cap(scrub(text), limit)


def prune_json(value: Any) -> tuple[Any, bool]:
    """A copy of a JSON value small enough to keep: strings capped, long arrays and objects cut, at most
    :data:`OBSERVATION_NODE_LIMIT` values in all. Also scrubs surrogates. Returns ``(copy, whether anything was cut)``.
    """
    budget = [OBSERVATION_NODE_LIMIT]
    cut = [False]

    def copy(item: Any, depth: int) -> Any:
        budget[0] -= 1
        if isinstance(item, str):
            capped = cap(scrub(item), OBSERVATION_STRING_LIMIT)
            cut[0] |= capped is not item and len(capped) != len(item)
            return capped
        if not isinstance(item, dict | list):
            return item
        if depth > 64 or budget[0] <= 0:
            cut[0] = True
            return "… [cut: too large or too deep to keep]"
        if isinstance(item, list):
            kept = []
            for index, entry in enumerate(item):
                if index >= OBSERVATION_ITEM_LIMIT or budget[0] <= 0:
                    cut[0] = True
                    kept.append(f"… [{len(item) - index} more items]")
                    break
                kept.append(copy(entry, depth + 1))
            return kept
        result: dict[str, Any] = {}
        for index, (key, entry) in enumerate(item.items()):
            if index >= OBSERVATION_ITEM_LIMIT or budget[0] <= 0:
                cut[0] = True
                result["…"] = f"[{len(item) - index} more keys]"
                break
            result[cap(scrub(key), QUOTE_LIMIT)] = copy(entry, depth + 1)
        return result

    return copy(value, 0), cut[0]


def schema_problem(error: ValidationError) -> str:
    """A schema error on an answer, said shortly: the path and a short quotation, never the whole value."""
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{cap(str(p), QUOTE_LIMIT)}" for p in error.absolute_path) or "(root)"
    message = error.message
    if len(message) > FIELD_LIMIT // 4:
        # jsonschema's messages start with the repr of the whole instance: quote it shortly instead.
        whole = repr(error.instance)
        message = quote_value(error.instance) + message[len(whole) :] if message.startswith(whole) else message
    return f"at {where}: {cap(scrub(message), FIELD_LIMIT // 4)}"


class Budget:
    """How much student text one submission may still store: each field is capped, and all of them together."""

    def __init__(self, limit: int = SUBMISSION_LIMIT) -> None:
        self.left = limit

    def take(self, text: str) -> str:
        """``text`` scrubbed and capped to what is left (at least :data:`SPENT_FIELD_LIMIT` characters)."""
        if len(text) <= SPENT_FIELD_LIMIT:
            kept = scrub(text)
        else:
            kept = cap(scrub(text), max(SPENT_FIELD_LIMIT, min(FIELD_LIMIT, self.left)))
        self.left -= len(kept)
        return kept


def for_terminal(text: str) -> str:
    """``text`` safe to print: control characters other than newline and tab shown as ``\\x1b``-style escapes.

    An escape sequence (colours, hyperlinks, a window title, a clipboard write, clearing the
    screen) loses its ESC and so does nothing; a carriage return that is not part of a CRLF
    cannot overwrite what was printed; C1 controls and bidi overrides cannot reorder text.
    """
    return _TERMINAL_UNSAFE.sub(lambda match: "\n" if match.group() == "\r\n" else _escape(match.group()), text)


def one_line(text: str) -> str:
    """``text`` on one line, safe for a terminal: newlines and tabs become spaces, other controls escapes."""
    return for_terminal(text.replace("\r\n", " ").replace("\n", " ").replace("\t", " "))


def markdown_fence(text: str, info: str = "text") -> str:
    """A fenced code block holding ``text``: its fence is longer than any backtick run in it, so nothing closes it early."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def markdown_code(text: str) -> str:
    """``text`` as an inline code span, on one line: nothing in it is Markdown (a heading, a table, a link)."""
    flat = one_line(text)
    longest = max((len(run) for run in _BACKTICKS.findall(flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]<>|!~&])")


def markdown_text(text: str) -> str:
    """``text`` as plain Markdown text on one line, not at a line's start: emphasis, links, HTML, code and
    table pipes are backslash-escaped, so a submission's name or message reads as what it is."""
    return _MARKDOWN_INLINE.sub(r"\\\1", one_line(text))


def for_xml(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold (C0 controls, U+FFFE, U+FFFF, surrogates) as a ``\\x01``-style escape."""
    return _XML_UNSAFE.sub(lambda match: _escape(match.group()), text)


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text, never runs: a leading ``'`` before ``=``, ``+``, ``-``, ``@``, tab or CR.

    As OWASP advises, even ``-1`` is prefixed: the gradebook's own numbers are never negative.
    A cell that starts with ``'`` gets one more, so :func:`csv_cell_value` can undo it exactly.
    """
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def csv_cell_value(cell: str) -> str:
    """The text :func:`csv_cell` was given (what a gradebook row holds in memory)."""
    return cell[1:] if cell.startswith("'") else cell
