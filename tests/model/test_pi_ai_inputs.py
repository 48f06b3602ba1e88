"""Profile pi-ai-1: every input a case hands a port is a valid upstream value (spec/schemas/pi-ai-1-ir.schema.json)."""

from __future__ import annotations

from pathlib import Path

from conformance.authoring.lint import lint
from conformance.loading.loader import load_suite
from tests.support.scratch_cases import SHARED_HEADER as HEADER

USAGE = (
    "{input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0}}"
)
ASSISTANT = f"{{role: assistant, content: [], api: a, provider: p, model: m, usage: {USAGE}, stopReason: stop, timestamp: 5}}"
COURSE_USAGE = "{input: 1, output: 1, totalTokens: 2}"
COURSE_ASSISTANT = f"{{role: assistant, content: [], provider: p, model: m, usage: {COURSE_USAGE}, stopReason: stop, timestamp: 5}}"

SHARED = """\
profile: [course, pi-ai-1]
topic: shared scratch
course: {chapter: "03"}
cases:
  - id: scratch-shared-prompt
    clauses: [SYS-PROMPT-1, PA-PROMPT-1]
    course: {lab: "3.1"}
    pi-ai-1: {features: [system-replay]PI_AI_INPUT}
    description: The assistant turn does not count.
    operation: current_system_prompt
    input:
      messages: [{role: system, content: A, timestamp: 1}, COURSE_ASSISTANT]
    expect: {value: A, input_unchanged: true}
"""


def shared(tmp_path: Path, pi_ai_input: str) -> Path:
    root = tmp_path / "fixtures"
    (root / "shared").mkdir(parents=True)
    text = SHARED.replace("PI_AI_INPUT", pi_ai_input).replace("COURSE_ASSISTANT", COURSE_ASSISTANT)
    (root / "shared" / "one.yaml").write_text(HEADER + text, encoding="utf-8")
    return root


def test_a_course_shaped_assistant_message_is_no_upstream_input(tmp_path: Path) -> None:
    root = shared(tmp_path, "")
    assert not load_suite(root).broken  # the course's own type
    for _ in range(2):  # and again from the validation cache: a file with a shape problem is never remembered as valid
        [broken] = load_suite(root, profile="pi-ai-1").broken
        assert broken.problems == ("input.messages[1]: not an upstream Message (pi-ai 1.6.0 types.d.ts): missing required key 'api'",)
    reported = [str(found) for found in lint(root)]
    assert any("scratch-shared-prompt: input.messages[1]: not an upstream Message" in line for line in reported), reported


def test_a_shared_case_gives_pi_ai_1_its_own_upstream_typed_input(tmp_path: Path) -> None:
    root = shared(tmp_path, f", input: {{messages: [{{role: system, content: A, timestamp: 1}}, {ASSISTANT}]}}")
    course, pi_ai = load_suite(root), load_suite(root, profile="pi-ai-1")
    assert not course.broken and not pi_ai.broken, course.problems + pi_ai.problems
    assert "api" not in course.cases[0].input["messages"][1]  # type: ignore[index,operator]
    assert pi_ai.cases[0].input["messages"][1]["api"] == "a"  # type: ignore[index,call-overload]


def pi_ai_problems(tmp_path: Path, body: str, area: str = "event-streams") -> list[str]:
    """The load problems of one pi-ai-1 case whose operation, input and steps are ``body``."""
    root = tmp_path / "fixtures"
    (root / "pi-ai-1").mkdir(parents=True)
    head = f"profile: pi-ai-1\ntopic: scratch\ncases:\n- id: pa-scratch\n  features: [{area}]\n"
    head += "  clauses: [PA-STREAM-1]\n  description: scratch.\n"
    (root / "pi-ai-1" / "one.yaml").write_text(head + body, encoding="utf-8")
    return [problem for broken in load_suite(root, profile="pi-ai-1").broken for problem in broken.problems]


def test_a_pushed_event_with_a_course_only_key_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    call = "{type: toolCall, id: c, name: n, arguments: {}, rawArguments: '{}'}"
    event = f"{{type: toolcall_end, contentIndex: 0, toolCall: {call}, partial: {ASSISTANT}}}"
    body = f"  operation: event_stream\n  input: {{kind: assistant}}\n  steps:\n  - {{action: push, event: {event}}}\n"
    [problem] = pi_ai_problems(tmp_path, body)
    # At the misspelt key itself (its own line).
    assert problem.startswith("steps[0].event.toolCall.rawArguments: not an upstream AssistantMessageEvent"), problem
    assert problem.endswith("unknown key 'rawArguments' (did you mean 'arguments'?)"), problem


def test_a_faux_step_without_usage_or_timestamp_is_refused(tmp_path: Path) -> None:
    step = "{role: assistant, content: [], api: a, provider: p, model: m, stopReason: stop}"
    stream = "{action: stream, call: c1, context: {messages: []}}"
    body = f"  operation: faux_provider\n  input: {{responses: [{{message: {step}}}]}}\n  steps:\n  - {stream}\n"
    [problem] = pi_ai_problems(tmp_path, body, "faux-provider")
    assert problem.startswith("input.responses[0].message: not an upstream AssistantMessage"), problem
    assert problem.endswith("missing required key 'usage', 'timestamp'"), problem


def test_a_generic_stream_takes_any_values(tmp_path: Path) -> None:
    steps = "  - {action: push, event: {type: x, rawArguments: 1}}\n  - {action: end, result: null}\n"
    body = f"  operation: event_stream\n  input: {{kind: generic, terminal_types: [fin], result_field: v}}\n  steps:\n{steps}"
    assert pi_ai_problems(tmp_path, body) == []


def test_a_misspelt_key_in_an_expected_event_is_a_load_problem_with_a_suggestion(tmp_path: Path) -> None:
    pending = ASSISTANT.replace("stopReason: stop", "stopReason: pending")
    event = f"{{type: text_start, contentIndex: 0, partial: {pending}}}"
    expected = "{type: text_start, content_index: 0, partial: {$type: object}}"
    body = (
        "  operation: event_stream\n  input: {kind: assistant}\n  steps:\n"
        f"  - {{action: push, event: {event}}}\n"
        f"  - {{action: consume, expect: {{events: [{expected}]}}}}\n"
    )
    [problem] = pi_ai_problems(tmp_path, body)
    assert problem == "steps[1].expect.events[0].content_index: unknown key 'content_index' (did you mean 'contentIndex'?)"


def test_an_expected_value_of_the_wrong_shape_for_its_operation_is_caught(tmp_path: Path) -> None:
    # Every other key is there (matchers): the misspelt one is the only problem.
    value = "{role: assistant, content: [], api: a, provider: p, model: m, usage: {$any: true}, stop_reason: stop, timestamp: 1}"
    body = f"  operation: faux_message\n  input: {{content: hi}}\n  expect: {{value: {value}}}\n"
    [problem] = pi_ai_problems(tmp_path, body, "messages")
    assert problem == "expect.value.stop_reason: unknown key 'stop_reason' (did you mean 'stopReason'?)"
