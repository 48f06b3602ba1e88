"""The worked example of docs/porting.md: a port with its own types (examples/typed_port), bound in under 40 lines.

It passes every course case of chapters 03 and 04, and the binding hooks (``to_impl``, ``to_json``) observe its own
objects: broken variants that mutate the port's inputs, share one partial between events or
resolve ``result()`` with a copy are each caught.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.loading.loader import Suite
from conformance.running.engine import run_alone

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def port() -> Iterator[ModuleType]:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import typed_port.binding

        yield typed_port.binding
    finally:
        sys.path.remove(str(EXAMPLES))


def course_cases(suite: Suite) -> list[Any]:
    """The course cases the example ports: chapters 03 and 04 (it has no tool contract)."""
    return [case for case in suite.cases if case.profile == "course" and case.chapter in {"03", "04"}]


def failures(binding: Any, suite: Suite, operation: str | None = None) -> dict[str, str]:
    adapter = BindingAdapter(binding, name="typed-port-variant")
    cases = [case for case in course_cases(suite) if operation is None or case.operation == operation]
    outcomes = [run_alone(adapter, case) for case in cases]
    return {outcome.case_id: outcome.message for outcome in outcomes if outcome.status != "passed"}


def variant(binding: ModuleType, **replacements: Any) -> SimpleNamespace:
    return SimpleNamespace(**{**vars(binding), **replacements})


def test_the_binding_is_at_most_40_lines() -> None:
    assert len((EXAMPLES / "typed_port" / "binding.py").read_text(encoding="utf-8").splitlines()) <= 40


def test_the_typed_port_passes_every_course_case(port: ModuleType, suite: Suite) -> None:
    assert course_cases(suite)
    assert failures(port, suite) == {}


def test_a_mutation_of_the_ports_own_input_objects_is_caught(port: ModuleType, suite: Suite) -> None:
    import typed_port

    def text_of(message: Any) -> str:
        value = typed_port.message_text(message)
        for block in getattr(message, "content", []):
            if hasattr(block, "text"):
                block.text = block.text.strip()  # a "harmless" tidy-up of the caller's message
        return value

    failed = failures(variant(port, text_of=text_of), suite, "text_of")
    assert failed and all("input_unchanged: expected true but got false" in message for message in failed.values()), failed


def test_a_script_shared_with_the_result_is_caught(port: ModuleType, suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    from typed_port import messages, scripted

    original = scripted.ScriptedLLM._produce

    def produce(self: Any, channel: Any, turn: Any, token: Any) -> None:
        if isinstance(turn, messages.AssistantMsg) and (token is None or not token.cancelled):
            scripted.emit(channel, turn)  # the script's own message, not a copy
        else:
            original(self, channel, turn, token)

    monkeypatch.setattr(scripted.ScriptedLLM, "_produce", produce)
    failed = failures(port, suite, "scripted_model")
    assert any("turns_unchanged: expected true but got false" in message for message in failed.values()), failed


def test_a_partial_shared_between_events_is_caught(port: ModuleType, suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    from typed_port import js_text, messages, scripted

    def emit(channel: Any, message: Any) -> None:
        partial = copy.deepcopy(message)
        partial.content, partial.stop_reason = [], "stop"
        channel.push(messages.Start(partial))  # one partial object, grown in place by every later event
        for index, block in enumerate(message.content):
            partial.content.append(copy.deepcopy(block))
            if isinstance(block, messages.Text):
                channel.push(messages.TextDelta(index, block.text, partial))
            else:
                text = js_text.stringify(block.arguments) if block.raw_arguments is None else block.raw_arguments
                channel.push(messages.ToolCallDelta(index, text, partial))
                channel.push(messages.ToolCallEnd(index, copy.deepcopy(block), partial))
        scripted.finish(channel, message)

    monkeypatch.setattr(scripted, "emit", emit)
    failed = failures(port, suite, "scripted_model")
    assert any(".partial" in message and "events" in message for message in failed.values()), failed


def test_a_result_that_is_not_the_terminal_events_message_is_caught(port: ModuleType, suite: Suite) -> None:
    import typed_port
    from typed_port.messages import Done, Failed

    class CopyingChannel(typed_port.Channel):
        def __init__(self) -> None:  # result(): a copy of the terminal event's message, equal but not the same object
            super().__init__(lambda e: isinstance(e, Done | Failed), lambda e: copy.deepcopy(e.message if isinstance(e, Done) else e.error))

    failed = failures(variant(port, AssistantMessageEventStream=CopyingChannel), suite, "event_stream")
    assert any('same_object_as: expected "terminal_event"' in message for message in failed.values()), failed


def test_the_guide_shows_the_binding_as_it_is() -> None:
    guide = (EXAMPLES.parent / "docs" / "porting.md").read_text(encoding="utf-8")
    shown = guide.split("The whole binding:\n\n```python\n", 1)[1].split("```", 1)[0]
    binding = (EXAMPLES / "typed_port" / "binding.py").read_text(encoding="utf-8")
    assert shown.strip() in binding
