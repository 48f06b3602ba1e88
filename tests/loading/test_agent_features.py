"""pi-agent-core-1 cases get their entry point, config functions and 1.x behaviours as features, so a port opts out of each alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.loading import validation_cache
from conformance.loading.loader import load_suite
from conformance.model.agent_class_features import AGENT_CLASS_FUNCTIONS
from conformance.model.agent_features import PI_AGENT_CORE_1_FUNCTIONS, agent_features
from conformance.model.profiles import PI_AGENT_CORE_1

TOOL: dict[str, Any] = {"name": "echo", "parameters": {"type": "object", "properties": {"value": {"type": "string"}}}}
DECLARED = {"name": "echo", "description": "echo", "parameters": TOOL["parameters"]}


def test_entry_points_and_config_functions_are_named_as_upstream_kebab_cased() -> None:
    assert agent_features({}, {}) == ("run-agent-loop",)
    config = {"before_tool_call": {}, "follow_up": [], "tool_execution": "sequential"}
    found = agent_features({"entry": "agentLoopContinue", "config": config, "tools": [{**TOOL, "execution_mode": "sequential"}]}, {})
    assert found[:4] == ("agent-loop-continue", "before-tool-call", "get-follow-up-messages", "tool-execution")
    assert "execution-mode" in found


def test_tool_declarations_only_where_the_loop_writes_one() -> None:
    undeclared = {"tools": [TOOL], "context": {"messages": []}}
    assert "tool-declarations" in agent_features(undeclared, {})
    declared = {"tools": [TOOL], "context": {"messages": [{"role": "system", "content": "", "toolsAdded": [DECLARED], "timestamp": 0}]}}
    assert "tool-declarations" not in agent_features(declared, {})
    changed = {**declared, "tools": [{**TOOL, "description": "another"}]}
    assert "tool-declarations" in agent_features(changed, {})
    assert "tool-declarations" in agent_features({"prompts": [{"role": "system", "content": "x", "timestamp": 1}]}, {})
    assert "tool-declarations" not in agent_features({"prompts": [{"role": "user", "content": "x", "timestamp": 1}]}, {})


def test_duration_and_truncated_calls_follow_the_case() -> None:
    assert "duration-ms" in agent_features({}, {"result": [{"role": "toolResult", "durationMs": {"$type": "number"}}]})
    assert "duration-ms" not in agent_features({}, {"result": [{"role": "toolResult"}]})
    assert "thinking-level" in agent_features({}, {"result": [{"role": "assistant", "thinkingLevel": "off"}]})
    assert "thinking-level" not in agent_features({}, {"trace": ["agent_start"]})
    length = {"role": "assistant", "stopReason": "length", "content": [{"type": "toolCall", "id": "c", "name": "echo", "arguments": {}}]}
    assert "truncated-calls" in agent_features({"model": {"turns": [{"message": length}]}}, {})
    assert "truncated-calls" not in agent_features({"model": {"turns": [{"message": {**length, "stopReason": "stop"}}]}}, {})


def test_every_finer_feature_is_the_profiles_and_the_loader_adds_them() -> None:
    assert PI_AGENT_CORE_1.functions == (*PI_AGENT_CORE_1_FUNCTIONS, *AGENT_CLASS_FUNCTIONS)
    suite = load_suite(profile="pi-agent-core-1")
    named = {feature for case in suite.cases for feature in case.features[1:]}
    assert named <= set(PI_AGENT_CORE_1.functions) and {"run-agent-loop", "tool-declarations", "duration-ms"} <= named
    by_id = {case.id: case for case in suite.cases}
    assert "tool-declarations" not in by_id["pac-declared-tools-no-new-message"].features
    assert "truncated-calls" in by_id["pac-length-calls-failed-loop-continues"].features


def test_an_agent_case_gets_the_methods_and_modes_it_uses() -> None:
    by_id = {case.id: case for case in load_suite(profile="pi-agent-core-1").cases}
    assert by_id["pac-agent-steering-mode-all"].features[:3] == ("agent", "queue-modes", "agent-steer")
    assert set(by_id["pac-agent-listener-barrier"].features) >= {"listener-barrier", "agent-wait-for-idle", "duration-ms", "thinking-level"}
    assert "run-agent-loop" not in by_id["pac-agent-prompt-text"].features  # the entry point is agent_loop's alone


def test_every_features_module_keys_the_parsed_cache() -> None:
    """A features module the loader derives from must change the cache key when it changes, or a stale suite loads."""
    model = Path(validation_cache.__file__).resolve().parents[1] / "model"
    modules = sorted(f"model/{path.name}" for path in model.glob("*features*.py"))
    assert modules and set(modules) <= set(validation_cache._CHECKING_MODULES), modules
