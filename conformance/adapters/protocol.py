"""The JSON-lines protocol's lines (spec/protocol.md): quoting what a program wrote, decoding it, checking seals.

Nothing here starts or talks to a process: :mod:`.session` runs the program, :mod:`.process`
is the adapter that speaks the protocol over it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re

from conformance.adapters.interface import HarnessError
from conformance.common.student_text import decode_line, may_hold_surrogates, scrub, scrub_json

PROTOCOL_VERSION = 1
DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024
#: How much of a program's line an error message quotes, in characters.
QUOTE_CHARS = 300


def quote(data: bytes | str) -> str:
    """A short, printable quotation of what the program wrote."""
    text = decode_line(data[: 4 * QUOTE_CHARS]) if isinstance(data, bytes) else scrub(data[: 4 * QUOTE_CHARS])
    text = text.rstrip("\n")
    return repr(text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "…")


def decode_response(data: bytes) -> object:
    """One line of the program's output as JSON; ``ValueError`` if it is not JSON.

    Invalid UTF-8 becomes U+FFFD, and so do lone surrogates (``"\\ud800"``, which JSON allows
    and Python decodes but cannot encode again): nothing downstream may fail on an answer.
    """
    text = decode_line(data)
    response = json.loads(text)
    return scrub_json(response) if may_hold_surrogates(text) else response


_SEAL = re.compile(rb',"seal":"([0-9a-f]{64})"\}\r?\n?$')


def unsealed(line: bytes, key: bytes, what: str) -> bytes:
    """``line`` as its writer sealed it, checked: a line without a valid seal was not written by the adapter.

    A sealed line is the JSON text ``T`` of a message with ``,"seal":"<hex>"`` put before its
    closing brace, where ``<hex>`` is HMAC-SHA256 of ``T``'s UTF-8 bytes under the handshake's
    ``channel_key`` (spec/protocol.md, "Sealed lines").
    """
    match = _SEAL.search(line)
    if match is None:
        raise HarnessError(
            f"{what}: a line without the adapter's seal, so not the adapter's (forged by the implementation?): {quote(line)}"
        )
    text = line[: match.start()] + b"}"
    if not hmac.compare_digest(hmac.new(key, text, hashlib.sha256).hexdigest().encode(), match[1]):
        raise HarnessError(f"{what}: a line whose seal is wrong, so not the adapter's (forged by the implementation?): {quote(line)}")
    return line
