"""One message to a JSON-lines program and its one response (spec/protocol.md).

Send, then read lines until the response: notices on the way say which module is loading;
the handshake's answer says whether lines are sealed from then on; the response must carry the
message's ``seq`` and match its schema. A program that exits, goes silent, or writes an
oversize or malformed line is an error that names what it was doing, with its stderr's end.
"""

from __future__ import annotations

import time

from conformance.adapters.interface import HarnessError, HarnessTimeout
from conformance.adapters.protocol import decode_response, quote, unsealed
from conformance.adapters.session import Session
from conformance.common.jsontypes import JsonObject
from conformance.common.student_text import schema_problem
from conformance.model.schemas import validator

STDERR_NOTE = "; the end of its stderr:"
NO_STDERR_NOTE = "; it wrote nothing on stderr"


class ProgramExited(HarnessError):
    """The program exited (or was killed) instead of answering."""


def exchange(session: Session, message: JsonObject, timeout_s: float, response_def: str, what: str, name: str) -> JsonObject:
    """Send one message and read its one response line, validated against ``response_def``.

    ``name`` is the program's, for the message when it exits instead of answering.
    """
    try:
        session.send(message)
    except (OSError, ValueError):
        raise ProgramExited(f"{name} {session.exit_description()} before reading {what}{_stderr_note(session)}") from None
    deadline = time.monotonic() + timeout_s
    while True:
        data = _receive_line(session, deadline, timeout_s, what, name)
        response, data = _decode(session, data, response_def, what)
        if "notice" not in response or "seq" in response:
            break
        if next(iter(validator("protocol.schema.json", "/$defs/Notice").iter_errors(response)), None) is not None:
            raise HarnessError(f"{what}: a notice breaks the protocol: {quote(data)}")
        session.loading = str(response["module"]) if response["notice"] == "loading" else None
    if response.get("seq") != message["seq"]:
        raise HarnessError(f"{what}: the response has seq {response.get('seq')!r}, expected {message['seq']}: {quote(data)}")
    if response.get("ok") is False and response_def != "HelloResponse":
        response_def = "ErrorResponse"
    error = next(iter(validator("protocol.schema.json", f"/$defs/{response_def}").iter_errors(response)), None)
    if error is not None:
        raise HarnessError(f"{what}: the response breaks the protocol {schema_problem(error)}: {quote(data)}")
    return response


def _receive_line(session: Session, deadline: float, timeout_s: float, what: str, name: str) -> bytes:
    """The program's next line by ``deadline``; its exit, an oversize line or silence is an error."""
    kind, data = session.receive(max(0.0, deadline - time.monotonic()))
    if kind == "eof":
        raise ProgramExited(f"{name} {session.exit_description()} during {what}{_stderr_note(session)}")
    if kind == "oversize":
        raise HarnessError(f"{what}: a response line is longer than {session.options.max_line_bytes} bytes; it starts {quote(data)}")
    if not data:
        raise HarnessTimeout(f"{what}: no answer within {timeout_s:g} s")
    return data


def _decode(session: Session, data: bytes, response_def: str, what: str) -> tuple[JsonObject, bytes]:
    """One line as a JSON object, unsealed; the handshake's answer says whether the lines are sealed from then on."""
    if session.sealed:
        data = unsealed(data, session.channel_key, what)
    try:
        response = decode_response(data)
    except (ValueError, RecursionError):
        raise HarnessError(f"{what}: expected one JSON object per line but got {quote(data)}") from None
    if not isinstance(response, dict):
        raise HarnessError(f"{what}: expected a JSON object but got {quote(data)}")
    if response_def == "HelloResponse" and response.get("sealed") is True:
        data = unsealed(data, session.channel_key, what)
        response.pop("seal", None)
        session.sealed = True
    elif response_def == "HelloResponse" and session.options.require_seal:
        raise HarnessError(f"{what}: the adapter does not seal its lines, so forged lines could not be told apart")
    if session.sealed:
        response.pop("seal", None)
    return response, data


def _stderr_note(session: Session) -> str:
    tail = session.stderr_text()
    return f"{STDERR_NOTE}\n{tail}" if tail else NO_STDERR_NOTE
