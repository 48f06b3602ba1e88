"""pi_ai_port bound to pi-conformance, in process (conformance.adapters.pi_ai_binding).

PYTHONPATH=examples pi-conformance run --profile pi-ai-1 --impl python:pi_ai_port.conformance:ADAPTER
"""

import sys

from conformance.adapters.pi_ai_binding import PiAiBindingAdapter

# The package itself is the binding: it exposes every name the binding looks for.
ADAPTER = PiAiBindingAdapter(sys.modules[__package__ or "pi_ai_port"], name="pi-ai-python-port")
