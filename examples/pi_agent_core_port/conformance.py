"""pi_agent_core_port bound to pi-conformance, in process (conformance.adapters.pi_agent_core_binding).

PYTHONPATH=examples pi-conformance run --profile pi-agent-core-1 --impl python:pi_agent_core_port.conformance:ADAPTER
"""

import sys

from conformance.adapters.pi_agent_core_binding import PiAgentCoreBindingAdapter

# The package itself is the binding: it exposes every name the binding looks for.
ADAPTER = PiAgentCoreBindingAdapter(sys.modules[__package__ or "pi_agent_core_port"], name="pi-agent-core-python-port")
