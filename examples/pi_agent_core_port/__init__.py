"""pi_agent_core_port: a small Python port of upstream pi-agent-core 1.x's agent loop and Agent, profile ``pi-agent-core-1``.

Written from spec/pi-agent-core-1/spec.md (and the package's ``dist/agent-loop.js`` where the spec
is silent), on top of the bundled pi-ai port (``examples/pi_ai_port``) as upstream stands on
pi-ai. Values are plain dicts with upstream's camelCase keys; the config is a dict with
snake_case keys. The names below are the ones ``conformance.adapters.pi_agent_core_binding``
looks for, so this package is its own binding:

    PYTHONPATH=examples pi-conformance run --profile pi-agent-core-1 --impl python:pi_agent_core_port.conformance:ADAPTER
"""

from ._pi_ai import pi_ai
from .agent import Agent
from .loop import agent_loop, agent_loop_continue, run_agent_loop, run_agent_loop_continue

AbortController = pi_ai.AbortController
AssistantMessageEventStream = pi_ai.AssistantMessageEventStream

__all__ = [
    "AbortController",
    "Agent",
    "AssistantMessageEventStream",
    "agent_loop",
    "agent_loop_continue",
    "run_agent_loop",
    "run_agent_loop_continue",
]
