"""The Python port of upstream pi-ai (examples/pi_ai_port) passes every pi-ai-1 case in process, and its broken variants fail.

Each variant breaks one rule of spec/pi-ai-1/spec.md in the port's faux provider or streams,
and must fail the cases of that rule, with a message naming the path where it shows.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.adapters.pi_ai_binding import PiAiBindingAdapter
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite, load_suite
from conformance.running.engine import run_alone
from examples.pi_ai_port import event_stream, faux, js_text
from examples.pi_ai_port.conformance import ADAPTER
from tests.support.cli_runner import cli


@pytest.fixture(scope="module")
def pi_ai_suite() -> Suite:
    return load_suite(profile="pi-ai-1")


def outcomes(suite: Suite, adapter: PiAiBindingAdapter = ADAPTER) -> dict[str, Outcome]:
    return {case.id: run_alone(adapter, case) for case in suite.cases}


def failures(suite: Suite) -> dict[str, str]:
    """The message of every case the (possibly broken) port does not pass."""
    return {case_id: outcome.message for case_id, outcome in outcomes(suite).items() if outcome.status != "passed"}


def clauses_of(suite: Suite, case_ids: Iterable[str]) -> set[str]:
    by_id = {case.id: case for case in suite.cases}
    return {clause for case_id in case_ids for clause in by_id[case_id].clauses}


def test_the_port_passes_every_pi_ai_case_with_none_skipped(pi_ai_suite: Suite) -> None:
    assert not pi_ai_suite.broken, pi_ai_suite.problems
    results = outcomes(pi_ai_suite)
    assert {case.features[0] for case in pi_ai_suite.cases} == {"messages", "system-replay", "event-streams", "faux-provider"}
    assert {case_id: (o.status, o.message) for case_id, o in results.items() if o.status != "passed"} == {}


def test_the_documented_command_runs_the_port_from_the_repository_root(tmp_path: Path) -> None:
    impl = "python:pi_ai_port.conformance:ADAPTER"
    result = cli(
        "run", "--profile", "pi-ai-1", "--impl", impl, "--report-json", str(tmp_path / "report.json"), env={"PYTHONPATH": "examples"}
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failed, 0 errored, 0 skipped" in result.stdout
    # The JSON report groups cases by area, as the terminal summary does; "lab" is the course's word.
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["profile"] == "pi-ai-1"
    assert {case["area"] for case in report["cases"]} == {"messages", "system-replay", "event-streams", "faux-provider"}
    assert all("lab" not in case for case in report["cases"])


def test_snapshotted_partials_are_caught(pi_ai_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    class SnapshotStream(event_stream.AssistantMessageEventStream):
        def push(self, event: Any) -> None:  # the course's rule: a deep copy per event, not blocks shared and grown in place
            super().push({**event, "partial": copy.deepcopy(event["partial"])} if "partial" in event else event)

    monkeypatch.setattr(faux, "AssistantMessageEventStream", SnapshotStream)
    failed = failures(pi_ai_suite)
    assert "PA-FAUX-PLAY-3" in clauses_of(pi_ai_suite, list(failed))
    assert all(".partial.content[" in message for message in failed.values()), failed


def test_a_wrong_exhaustion_text_is_caught(pi_ai_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faux, "NO_MORE_RESPONSES", "No more faux responses")
    failed = failures(pi_ai_suite)
    assert failed and all("PA-FAUX-EXHAUST-1" in clauses_of(pi_ai_suite, [case_id]) for case_id in failed), failed
    assert all('errorMessage: expected "No more faux responses queued"' in message for message in failed.values()), failed


def test_chunks_one_code_unit_too_long_are_caught(pi_ai_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    def chunks(self: faux.FauxProvider, text: str) -> list[str]:
        return js_text.utf16_chunks(text, lambda: 4 * self._min_tokens + 1) or [""]

    monkeypatch.setattr(faux.FauxProvider, "_chunks", chunks)
    failed = failures(pi_ai_suite)
    assert "PA-FAUX-CHUNK-1" in clauses_of(pi_ai_suite, list(failed))
    assert all(".delta: expected" in message for message in failed.values()), failed


def test_an_ignored_abort_is_caught(pi_ai_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faux, "_aborted", lambda signal: False)
    failed = failures(pi_ai_suite)
    aborting = {case.id for case in pi_ai_suite.cases if {"PA-FAUX-ABORT-1", "PA-FAUX-ABORT-3"} & set(case.clauses)}
    assert aborting & set(failed) and set(failed) <= aborting, failed
    assert any('abort_summary.type: expected "error" but got "done"' in message for message in failed.values()), failed
    assert any('events[0].type: expected "error" but got "start"' in message for message in failed.values()), failed


def test_a_push_after_the_end_that_is_delivered_is_caught(pi_ai_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    push = event_stream.EventStream.push

    def push_even_when_done(self: event_stream.EventStream, event: Any) -> None:
        was_done, self.done = self.done, False
        push(self, event)
        self.done = self.done or was_done

    monkeypatch.setattr(event_stream.EventStream, "push", push_even_when_done)
    failed = failures(pi_ai_suite)
    assert failed and all("PA-STREAM-3" in clauses_of(pi_ai_suite, [case_id]) for case_id in failed), failed
    assert all(".events: expected" in message for message in failed.values()), failed


def test_a_handle_without_a_method_skips_the_faux_cases_naming_it(pi_ai_suite: Suite) -> None:
    class NoQueue(faux.FauxProvider):
        set_responses = None  # type: ignore[assignment]

    import examples.pi_ai_port as port

    binding = SimpleNamespace(**{name: getattr(port, name) for name in port.__all__})
    binding.faux_provider = lambda options=None: NoQueue(options or {})
    results = outcomes(pi_ai_suite, PiAiBindingAdapter(binding, name="no-queue"))
    faux_cases = {case.id for case in pi_ai_suite.cases if case.operation == "faux_provider"}
    assert faux_cases and {results[case_id].status for case_id in faux_cases} == {"skipped"}
    assert all("faux_provider() has no set_responses" in results[case_id].message for case_id in faux_cases)
    assert all(outcome.status == "passed" for case_id, outcome in results.items() if case_id not in faux_cases)


def test_the_abort_summary_tells_a_kept_prefix_from_anything_else() -> None:
    from conformance.running.derived import abort_summary

    script: Any = {"content": [{"type": "thinking", "thinking": "hmm"}, {"type": "toolCall", "id": "t1", "name": "read", "arguments": {}}]}

    def summary(*kept: dict[str, Any]) -> Any:
        error: Any = {"type": "error", "reason": "aborted", "error": {"content": list(kept), "stopReason": "aborted", "errorMessage": "x"}}
        return abort_summary([{"type": "start"}, error], script)

    thinking = {"type": "thinking", "thinking": "hm"}
    assert summary(thinking, {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"a": 1}})["content_is_prefix"] is True
    assert summary({"type": "thinking", "thinking": "hmX"})["content_is_prefix"] is False
    assert summary({"type": "text", "text": "h"})["content_is_prefix"] is False
    assert summary(thinking, {"type": "toolCall", "id": "t2", "name": "read"})["content_is_prefix"] is False
    assert summary(thinking, script["content"][1], thinking)["content_is_prefix"] is False
    assert summary() == {
        "type": "error",
        "reason": "aborted",
        "stop_reason": "aborted",
        "error_message": "x",
        "content_is_prefix": True,
        "start_first": True,
        "one_terminal": True,
    }
    assert abort_summary([], script)["start_first"] is False


def test_copies_where_upstream_passes_objects_on_are_caught(pi_ai_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    import examples.pi_ai_port as port

    normalize, tools = port.normalize_context, port.get_current_tools
    monkeypatch.setattr(port, "normalize_context", lambda context: copy.deepcopy(normalize(context)))
    monkeypatch.setattr(port, "get_current_tools", lambda messages: copy.deepcopy(tools(messages)))

    class CopyingStream(event_stream.AssistantMessageEventStream):
        def push(self, event: Any) -> None:
            super().push({**event, "toolCall": copy.deepcopy(event["toolCall"])} if event.get("type") == "toolcall_end" else event)

    monkeypatch.setattr(faux, "AssistantMessageEventStream", CopyingStream)
    failed = failures(pi_ai_suite)
    assert failed.keys() == {
        "pa-normalize-returns-the-messages-array",
        "pa-current-tools-are-the-input-objects",
        "pa-faux-toolcall-end-carries-the-final-block",
    }, failed
    assert "messages_are_input: expected true but got false" in failed["pa-normalize-returns-the-messages-array"]
    assert "tool_calls_are_final: expected true but got false" in failed["pa-faux-toolcall-end-carries-the-final-block"]


def test_sections_in_insertion_order_are_caught(pi_ai_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    from examples.pi_ai_port import text, transcript

    monkeypatch.setattr(text, "js_object", dict)
    monkeypatch.setattr(transcript, "js_object", dict)
    failed = failures(pi_ai_suite)
    assert failed and all("PA-KEYS-1" in clauses_of(pi_ai_suite, [case_id]) for case_id in failed), failed
    assert "pa-replay-integer-like-section-first" in failed and "pa-systext-integer-like-sections-first" in failed


def test_python_number_text_in_tool_arguments_is_caught(pi_ai_suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(js_text, "_number", repr)
    failed = failures(pi_ai_suite)
    assert "pa-faux-args-json-numbers" in failed, failed
    assert all("PA-FAUX-TOOL-2" in clauses_of(pi_ai_suite, [case_id]) for case_id in failed), failed


def test_a_port_without_one_function_opts_out_of_that_function_alone(pi_ai_suite: Suite) -> None:
    result = cli(
        "run",
        "--profile",
        "pi-ai-1",
        "--impl",
        "python:pi_ai_port.conformance:ADAPTER",
        "--without-feature",
        "get-current-tools",
        env={"PYTHONPATH": "examples"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    tools_cases = [case.id for case in pi_ai_suite.cases if case.operation == "current_tools"]
    assert tools_cases and f"{len(tools_cases)} x feature get-current-tools not claimed" in result.stdout, result.stdout
    assert f"{len(pi_ai_suite.cases) - len(tools_cases)} passed, 0 failed" in result.stdout, result.stdout


def test_the_port_served_from_its_own_interpreter_over_the_protocol_passes(tmp_path: Path) -> None:
    """A port in its own venv: that venv's python serves it (python -m conformance.server), the runner checks it over cmd:."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    server = f"cmd:env PYTHONPATH={examples} {sys.executable} -m conformance.server --impl python:pi_ai_port.conformance:ADAPTER"
    result = cli("run", "--profile", "pi-ai-1", "--impl", server, "--sandbox", "none", "--lab", "system-replay")
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failed, 0 errored, 0 skipped" in result.stdout, result.stdout
    hello = subprocess.run(
        [sys.executable, "-m", "conformance.server", "--impl", "python:pi_ai_port.conformance:ADAPTER"],
        input='{"seq": 0, "op": "hello", "protocol": 1}\n',
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(examples)},
        timeout=60,
        check=True,
    )
    answer = json.loads(hello.stdout.splitlines()[0])
    assert answer["profile"] == "pi-ai-1" and "faux_provider" in answer["operations"] and "scripted_model" not in answer["operations"]
