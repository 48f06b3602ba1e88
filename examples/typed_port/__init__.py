"""typed_port: a worked example of a Python port with its own types (docs/porting.md).

Messages, blocks, turns and events are dataclasses with Python names (``messages.py``);
``wire.py`` converts them to and from the IR's JSON. ``binding.py`` plugs the port into
pi-conformance in under 40 lines:

    PYTHONPATH=examples pi-conformance run --impl python:typed_port.binding
"""

from .channel import Channel, ModelChannel
from .scripted import CancelSource, CancelToken, ScriptedLLM
from .views import make_assistant, make_text, make_user, message_text, options_from, replay_system, system_prompt, system_text

__all__ = [
    "CancelSource",
    "CancelToken",
    "Channel",
    "ModelChannel",
    "ScriptedLLM",
    "make_assistant",
    "make_text",
    "make_user",
    "message_text",
    "options_from",
    "replay_system",
    "system_prompt",
    "system_text",
]
