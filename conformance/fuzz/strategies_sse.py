"""Hypothesis strategies for chapter 05's transport: ``provider_fetch_stream`` over the adapter's scripted fetch.

A program is drawn for one outcome first (the stream ends, a payload is invalid, the order of
finish reasons is broken, fetch rejects, the status or the body is wrong, the call is aborted,
the base URL is refused) and then a fetch script that leads to it, so the tags say what the
case exercises. Bodies are SSE events of payloads or a verbatim text with CRLF, comments,
``event:``/``id:`` lines, multi-line data and a missing last blank line; the bytes arrive in
one read, two halves or at drawn offsets (often inside a character).

Left out on purpose, because the spec leaves them open or out of scope: an abort while the
transport is not waiting on the body (it could yield what it already holds); a choice
``index`` or an ``error`` key that is ``null`` (the course rejects them, though "``null``
counts as absent"); statuses a ``Response`` cannot carry a body with (204, 205, 304); base URLs
a URL parser would rewrite; whitespace around ``[DONE]`` other than spaces and tabs (trimming
differs between languages); bytes that are not UTF-8; a byte-order mark.
"""

from __future__ import annotations

import json
from typing import cast

from hypothesis import strategies as st

from conformance.adapters.provider_scripts import sse_body
from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program, texts

SSE_OUTCOMES = ("ends", "ends", "framing", "invalid", "order", "rejects", "status", "abort", "pre-aborted", "base-url")


def _choice(**fields: JsonValue) -> JsonValue:
    """A payload of one choice."""
    return {"choices": [dict(fields)]}


def _calls(*entries: JsonValue) -> JsonValue:
    """A payload whose one choice's delta holds these ``tool_calls`` entries."""
    return _choice(delta={"tool_calls": list(entries)})


_TOOL: JsonValue = {"index": 0, "id": "a"}
#: Each PROV-SSE-2 check and payloads that fail it alone (every other part valid).
INVALID_PAYLOADS: dict[str, list[JsonValue]] = {
    "not-json": ["{not json", "NaN", "", "[1,", "{'a': 1}"],
    "not-object": ["[1]", "5", '"s"', "null"],
    "error": [{"error": {"message": "rate limited"}, "choices": []}, {"error": "x"}],
    "choices": [{"choices": "x"}, {"choices": {}}, {}, {"choices": None}],
    "two-choices": [{"choices": [{"delta": {}}, {"delta": {}}]}],
    "usage": [{"choices": [], "usage": 5}, {"choices": [{"delta": {}}], "usage": []}, {"choices": [], "usage": "x"}],
    "usage-count": [
        {"choices": [], "usage": {"prompt_tokens": -1}},
        {"choices": [], "usage": {"completion_tokens": 1.5}},
        {"choices": [{"delta": {}}], "usage": {"total_tokens": "3"}},
        {"choices": [], "usage": {"prompt_tokens": 2, "total_tokens": True}},
        {"choices": [], "usage": {"completion_tokens": 2**53}},
    ],
    "empty-choices": [{"choices": []}, {"choices": [], "usage": None}],
    "choice": [{"choices": [7]}, {"choices": ["x"]}, {"choices": [None]}, {"choices": [[]]}],
    "choice-index": [_choice(index=-1, delta={}), _choice(index="0", delta={}), _choice(index=1.5, delta={})],
    "delta": [_choice(), _choice(delta=[]), _choice(delta="x"), _choice(delta=None)],
    "content": [_choice(delta={"content": 1}), _choice(delta={"content": True}), _choice(delta={"content": []})],
    "tool-calls": [_choice(delta={"tool_calls": {}}), _choice(delta={"tool_calls": "x"})],
    "tool-entry": [_calls(_TOOL, "x"), _calls(None)],
    "tool-index": [
        _calls({"id": "a"}),
        _calls({"index": -1, "id": "a"}),
        _calls(_TOOL, {"index": None, "id": "b"}),
        _calls({"index": 2**53}),
    ],
    "tool-type": [_calls({"index": 0, "type": "custom", "id": "a"}), _calls({"index": 0, "type": "", "id": "a"})],
    "tool-id": [_calls({"index": 0, "id": 5})],
    "tool-function": [_calls({"index": 0, "function": "f"}), _calls({"index": 0, "function": []})],
    "tool-name": [_calls({"index": 0, "function": {"name": 1}})],
    "tool-arguments": [_calls({"index": 0, "function": {"arguments": {}}})],
    "tool-no-delta": [
        _calls({"index": 0}),
        _calls(_TOOL, {"index": 1, "id": None, "function": {}}),
        _calls({"index": 0, "type": "function"}),
    ],
    "finish-reason": [_choice(delta={}, finish_reason=reason) for reason in ("content_filter", "tool_use", "", "STOP", 1)],
}
API_KEYS = ("sk-test-1", "offline-test-key", "never-print-this-secret", "k-1")
BASE_URLS = (
    "https://provider.invalid/v1",
    "https://provider.invalid/v1/",
    "https://provider.invalid/v1//",
    "http://127.0.0.1:8080/api",
    "https://api.example.test",
)
FINISH_REASONS = ("stop", "length", "tool_calls")
RELATIVE_URLS = ("provider.invalid/v1", "/v1", "", "api/v1/")
tokens = st.integers(0, 99)
usage_payload = cast(
    st.SearchStrategy[JsonObject],
    st.fixed_dictionaries({}, optional={"prompt_tokens": tokens, "completion_tokens": tokens, "total_tokens": tokens}),
)
contents = st.sampled_from(["先读", "a", "é✓", "line\nnext"]) | texts.filter(bool)


# -- payloads ---------------------------------------------------------------------------------


@st.composite
def tool_entry(draw: st.DrawFn, index: int) -> JsonObject:
    """One valid ``tool_calls`` entry: id, name or arguments (at least one), each maybe beside nulls."""
    entry: JsonObject = {"index": index}
    if draw(st.booleans()):
        entry["type"] = draw(st.sampled_from(["function", None]))
    present = draw(st.lists(st.sampled_from(["id", "name", "arguments"]), min_size=1, max_size=3, unique=True))
    if "id" in present:
        entry["id"] = draw(st.sampled_from(["call-read", "c1"]) | texts)
    function: JsonObject = {}
    for key in ("name", "arguments"):
        if key in present:
            function[key] = draw(st.sampled_from(['{"path":', '"a"}', "{}", "read"]) | texts)
        elif draw(st.integers(0, 3)) == 0:
            function[key] = None
    keep = draw(st.booleans())
    if function or keep:
        entry["function"] = function
    return entry


@st.composite
def content_payload(draw: st.DrawFn, tags: set[str], single: bool = False) -> JsonObject:
    """A payload with text, tool calls or both (``single``: one chunk at most), maybe usage and nulls."""
    delta: JsonObject = {}
    kind = draw(st.sampled_from(["text", "tool"] if single else ["text", "tool", "both"]))
    if kind != "tool":
        delta["content"] = draw(contents)
        tags.add("text")
    elif draw(st.booleans()):
        delta["content"] = draw(st.sampled_from([None, ""]))
    if kind != "text":
        indexes = [0] if single else draw(st.lists(st.sampled_from([0, 1, 2, 9007199254740991]), min_size=1, max_size=2, unique=True))
        delta["tool_calls"] = [draw(tool_entry(index)) for index in indexes]
        tags.add("tool")
    elif draw(st.integers(0, 3)) == 0:
        delta["tool_calls"] = None
    choice: JsonObject = {"delta": delta}
    if draw(st.booleans()):
        choice["index"] = 0
    if draw(st.integers(0, 2)) == 0:
        choice["finish_reason"] = None
    payload: JsonObject = {"choices": [choice]}
    if not single and draw(st.integers(0, 3)) == 0:
        payload["usage"] = draw(st.none() | usage_payload)
    return payload


def finish_payload(draw: st.DrawFn, reason: str) -> JsonObject:
    choice: JsonObject = {"delta": {}, "finish_reason": reason}
    if draw(st.integers(0, 3)) == 0:
        choice["delta"] = {"content": draw(contents)}  # text and the finish in one payload: allowed
    payload: JsonObject = {"choices": [choice]}
    if draw(st.integers(0, 2)) == 0:
        payload["usage"] = draw(usage_payload)
    return payload


@st.composite
def stream_payloads(draw: st.DrawFn, tags: set[str]) -> list[JsonValue]:
    """Content payloads, a finish (maybe repeated, maybe with usage), trailing usage, maybe [DONE] and what is never read."""
    payloads: list[JsonValue] = list(draw(st.lists(content_payload(tags), max_size=4)))
    if draw(st.integers(0, 4)):
        reason = draw(st.sampled_from(FINISH_REASONS))
        payloads.append(finish_payload(draw, reason))
        tags.add("finish")
        if draw(st.integers(0, 3)) == 0:
            payloads.append({"choices": [{"delta": {}, "finish_reason": reason}]})  # the same reason again (PROV-SSE-4)
            tags.add("finish-order")
    if draw(st.integers(0, 2)) == 0:
        payloads.append({"choices": [], "usage": draw(usage_payload.filter(bool))})
        tags.add("usage")
    if draw(st.booleans()):
        payloads.append(draw(st.sampled_from(["[DONE]", " [DONE] ", "\t[DONE]"])))
        tags.add("done")
        if draw(st.booleans()):
            never: list[JsonValue] = [{"choices": [{"delta": {"content": "never"}, "finish_reason": "stop"}]}, "{not json"]
            payloads.append(draw(st.sampled_from(never)))
    return payloads


def _cuts_outside_strings(text: str) -> list[int]:
    """Offsets in ``text`` between two JSON tokens (outside every string), where a newline may go."""
    cuts: list[int] = []
    in_string = escaped = False
    for offset, char in enumerate(text):
        if in_string:
            in_string, escaped = (not (char == '"' and not escaped)), (char == "\\" and not escaped)
            continue
        if char == '"':
            in_string = True
        elif offset and char in "{}[],:":
            cuts.append(offset)
    return cuts


IGNORED_LINES = (": keep-alive", "event: message", "event: ping", "id: 7", "retry: 1000", "dataset: 1", "data :x", ":")


@st.composite
def sse_text(draw: st.DrawFn, payloads: list[JsonValue]) -> str:
    """The payloads as SSE text: comments and other fields, ``data:`` with or without its space, data over several lines."""
    lines: list[str] = []
    for payload in payloads:
        text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        lines.extend(draw(st.lists(st.sampled_from(IGNORED_LINES), max_size=2)) if draw(st.integers(0, 2)) == 0 else [])
        form = draw(st.sampled_from(["space", "space", "bare", "multi"]))
        cuts = _cuts_outside_strings(text)
        if form == "multi" and cuts:  # joined with "\n", which JSON reads as whitespace (PROV-SSE-1)
            chosen = sorted(draw(st.lists(st.sampled_from(cuts), min_size=1, max_size=2, unique=True)))
            parts = [text[start:end] for start, end in zip([0, *chosen], [*chosen, len(text)], strict=True)]
            lines.extend(f"data: {part}" if draw(st.booleans()) else f"data:{part}" for part in parts)
            if draw(st.booleans()):
                lines.insert(len(lines) - draw(st.integers(0, len(parts) - 1)), "data")  # an empty data line: "\n\n"
        else:
            lines.append(f"data:{text}" if form == "bare" else f"data: {text}")
        lines.extend([""] * draw(st.integers(1, 2)))
    ending = draw(st.sampled_from(["blank", "blank", "none", "cr"]))
    while ending != "blank" and lines and lines[-1] == "":
        lines.pop()  # the body ends inside its last event, which still counts
    separators = [draw(st.sampled_from(["\n", "\r\n"])) for _ in lines]
    body = "".join(line + separator for line, separator in zip(lines, separators, strict=True))
    if ending == "none":
        body = body.rstrip("\r\n")
    elif ending == "cr":
        body = body.rstrip("\r\n") + "\r"
    return body


def _split(draw: st.DrawFn, fetch: JsonObject, tags: set[str]) -> None:
    """How the body's bytes arrive: two halves (the default), one read, or cut at drawn offsets (often inside a character)."""
    kind = draw(st.sampled_from(["middle", "middle", "none", "offsets", "offsets"]))
    if kind == "none":
        fetch["split"] = "none"
    body = sse_body(fetch)
    if kind == "offsets" and len(body) > 1:
        inside = [offset for offset in range(1, len(body)) if 0x80 <= body[offset] <= 0xBF]  # a continuation byte
        offsets = st.sampled_from(inside) | st.integers(1, len(body) - 1) if inside else st.integers(1, len(body) - 1)
        fetch["split"] = cast(JsonValue, sorted(draw(st.lists(offsets, min_size=1, max_size=4, unique=True))))
        tags.add("split" if not inside else "split-utf8")


wire_messages = st.one_of(
    st.builds(lambda text: {"role": "user", "content": text}, texts),
    st.builds(lambda text: {"role": "system", "content": text}, texts),
    st.builds(
        lambda text, name: {
            "role": "assistant",
            "content": text or None,
            **({"tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}]} if name else {}),
        },
        texts,
        st.sampled_from(["", "ls"]),
    ),
    st.builds(lambda text: {"role": "tool", "tool_call_id": "c1", "name": "ls", "content": text}, texts),
)
wire_tools = st.lists(
    st.builds(lambda name: {"type": "function", "function": {"name": name, "description": "d", "parameters": {"type": "object"}}}, texts),
    min_size=1,
    max_size=2,
)
api_keys = st.sampled_from(API_KEYS) | st.text("abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=3, max_size=10)


# -- the program ----------------------------------------------------------------------------------


def provider_fetch_programs() -> st.SearchStrategy[Program]:
    """Each outcome's programs as a branch of their own, mapped so that a mix does not flatten them (see
    :func:`.strategies_provider.provider_model_programs`)."""
    return st.one_of(*[provider_fetch_program(outcome) for outcome in SSE_OUTCOMES]).map(lambda program: program)


@st.composite
def provider_fetch_program(draw: st.DrawFn, outcome: str) -> Program:
    """A transport over the scripted fetch, drawn for ``outcome`` (see the module's docstring)."""
    program = Program("provider_fetch_stream", {}, tags={f"outcome:{outcome}"})
    key = draw(api_keys)
    program.input = {
        "base_url": draw(st.sampled_from(RELATIVE_URLS if outcome == "base-url" else BASE_URLS)),
        "api_key": key,
        "fetch": _fetch(draw, outcome, key, program.tags),
    }
    request: JsonObject = {
        "model": draw(st.sampled_from(["fixture-1", "m"]) | texts),
        "messages": cast(JsonValue, draw(st.lists(wire_messages, max_size=3))),
    }
    if draw(st.integers(0, 2)) == 0:
        request["tools"] = cast(JsonValue, draw(wire_tools))
    stream: JsonObject = {"action": "stream", "request": request}
    program.steps = [stream]
    if outcome == "base-url":
        return program  # the transport is refused when it is created: there is no stream
    if outcome in {"abort", "pre-aborted"}:
        stream["signal"] = "controller" if outcome == "abort" else "aborted"
    elif draw(st.integers(0, 2)) == 0:
        stream["signal"] = "controller"
    if outcome == "abort":
        # Paused on a chunk that ends its payload, so the abort finds the transport waiting on the body.
        program.steps += [
            {"action": "consume", "until": draw(st.sampled_from(sorted(program.tags & {"text", "tool"})))},
            {"action": "abort"},
        ]
    elif draw(st.integers(0, 3)) == 0:
        program.steps.append({"action": "consume", "until": draw(st.sampled_from(["text", "tool", "finish"]))})
    program.steps.append({"action": "consume"})
    if draw(st.integers(0, 2)) == 0 or (outcome == "pre-aborted" and draw(st.booleans())):
        program.steps.append({"action": "requests"})
        program.tags.add("requests")
    return program


def _fetch(draw: st.DrawFn, outcome: str, key: str, tags: set[str]) -> JsonObject:
    """The fetch script of ``outcome``."""
    if outcome == "rejects":
        return {"throw": _message_with_key(draw, key, tags)}
    if outcome == "status":
        status = draw(st.sampled_from([400, 401, 404, 429, 500, 503, 301]))
        if draw(st.integers(0, 2)) == 0:
            tags.add("no-body")
            return {"no_body": True, **({"status": status} if draw(st.booleans()) else {})}
        return {"status": status, "payloads": draw(stream_payloads(tags))}
    if outcome == "abort":
        payloads = draw(st.lists(content_payload(tags, single=True), min_size=1, max_size=3))
        fetch: JsonObject = {"payloads": cast(JsonValue, payloads), "then": "hang"}
        _split(draw, fetch, tags)
        return fetch
    return _payload_fetch(draw, outcome, tags)


def _payload_fetch(draw: st.DrawFn, outcome: str, tags: set[str]) -> JsonObject:
    """A body of payloads (or their SSE text, for ``framing``) that ends, breaks a check or breaks the finish's order."""
    if outcome not in {"invalid", "order"}:
        payloads = draw(stream_payloads(tags))
    else:  # valid content first, no finish and no [DONE] before what breaks
        payloads = cast(list[JsonValue], draw(st.lists(content_payload(tags), max_size=3)))
    if outcome == "invalid":
        kind = draw(st.sampled_from(sorted(INVALID_PAYLOADS)))
        tags.add(f"invalid:{kind}")
        payloads.append(draw(st.sampled_from(INVALID_PAYLOADS[kind])))
        payloads += draw(st.lists(content_payload(tags), max_size=1))  # never read
    elif outcome == "order":
        reason = draw(st.sampled_from(FINISH_REASONS))
        later = draw(st.sampled_from(["content", "other-reason", "same-reason"]))
        payloads.append(finish_payload(draw, reason))
        if later == "content":
            payloads.append(draw(content_payload(set())))
        else:
            other = reason if later == "same-reason" else draw(st.sampled_from([r for r in FINISH_REASONS if r != reason]))
            payloads.append({"choices": [{"delta": {}, "finish_reason": other}]})
        tags.update({"finish", "finish-order"})
    fetch: JsonObject = {"payloads": payloads}
    if outcome == "framing":
        fetch = {"body": draw(sse_text(payloads))}
        tags.add("framing")
    elif draw(st.integers(0, 4)) == 0:
        fetch["status"] = draw(st.sampled_from([200, 201, 202]))
    _split(draw, fetch, tags)
    return fetch


def _message_with_key(draw: st.DrawFn, key: str, tags: set[str]) -> str:
    """A rejection's message: words with the key among them (zero to three times), or the empty message."""
    kind = draw(st.sampled_from(["key", "key", "plain", "empty"]))
    words = st.sampled_from(["socket failed", " using ", "key=", "。"]) | texts
    parts = [] if kind == "empty" else draw(st.lists(words, min_size=1, max_size=3))
    for _ in range(draw(st.integers(1, 3)) if kind == "key" else 0):
        parts.insert(draw(st.integers(0, len(parts))), key)
    message = "".join(parts)
    tags.add("key-in-message" if key in message else "empty-message" if not message else "plain-message")
    return message
