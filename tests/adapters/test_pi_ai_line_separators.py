"""pi-ai-1's twin of the course's U+2028 case (issue 28): a port that escapes U+2028/U+2029 in a
tool call's argument text, as serializers of JavaScript source do, is not JSON.stringify and fails.

The cases' expected values come from spec/pi-ai-1/spec.md (PA-FAUX-TOOL-2, PA-FAUX-CHUNK-1,
PA-FAUX-USAGE-1); the Python port and the upstream package (tests/test_profile_pi_ai.py) pass them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from examples.pi_ai_port import faux, usage
from examples.pi_ai_port.conformance import ADAPTER
from examples.pi_ai_port.js_text import stringify

CASES = ("pa-faux-args-line-separators-chunked", "pa-faux-args-line-separators-in-keys-and-nesting")


def cases() -> list[Case]:
    by_id = {case.id: case for case in load_suite(profile="pi-ai-1").cases}
    return [by_id[case_id] for case_id in CASES]


def escaping_stringify(value: Any) -> str:
    """JSON.stringify, but U+2028/U+2029 written as escapes (valid JSON, not JSON.stringify's text)."""
    return stringify(value).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def test_the_port_passes_the_twins() -> None:
    assert [run_alone(ADAPTER, case).status for case in cases()] == ["passed", "passed"]


def test_the_cases_hold_raw_line_separators_in_keys_nesting_and_chunks() -> None:
    chunked, nested = cases()
    walked: Any = nested.input  # JSON the assertions walk
    arguments = walked["responses"][0]["message"]["content"][0]["arguments"]
    assert any("\u2028" in key for key in arguments) and "\u2028" in json.dumps(arguments["键\u2028名"], ensure_ascii=False)
    expected: Any = chunked.steps[1]["expect"]
    deltas = [event["delta"] for event in expected["events"] if event["type"] == "toolcall_delta"]
    # 4-unit chunks (tokenSize 1): the separator is one unit inside a chunk, not six.
    assert all(len(delta) == 4 for delta in deltas[:-1]) and any("\u2028" in delta for delta in deltas)


@pytest.mark.parametrize(
    "where",
    [
        pytest.param(("faux", "usage"), id="argument-text-and-usage-estimate"),
        pytest.param(("faux",), id="argument-text-only"),
    ],
)
def test_a_port_that_escapes_line_separators_fails_both(where: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    for module in where:
        monkeypatch.setattr({"faux": faux, "usage": usage}[module], "stringify", escaping_stringify)
    outcomes = [run_alone(ADAPTER, case) for case in cases()]
    assert [outcome.status for outcome in outcomes] == ["failed", "failed"], [outcome.message for outcome in outcomes]
    # The usage estimate counts the text's code units too; else the deltas show it.
    assert all(("usage" if "usage" in where else "delta") in outcome.message for outcome in outcomes), [o.message for o in outcomes]
