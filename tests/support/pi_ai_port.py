"""A partial binding of examples/pi_ai_port: its text and system-replay helpers only, to check what the binding skips.

The whole port passes every pi-ai-1 case (tests/examples/test_pi_ai_port.py); this cut of it binds no
faux constructors, event streams or faux provider, so those cases are skipped with the name
that is missing.
"""

from __future__ import annotations

from types import SimpleNamespace

from conformance.adapters.pi_ai_binding import PiAiBindingAdapter
from examples.pi_ai_port import text, transcript

HELPERS = SimpleNamespace(
    content_text=text.content_text,
    get_system_message_text=text.get_system_message_text,
    render_system_message_update=text.render_system_message_update,
    get_current_system_message=transcript.get_current_system_message,
    get_current_system_prompt=transcript.get_current_system_prompt,
    get_current_tools=transcript.get_current_tools,
    normalize_context=transcript.normalize_context,
)

ADAPTER = PiAiBindingAdapter(HELPERS, name="pi-ai-python-port")
