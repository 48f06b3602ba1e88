"""The pi-conformance binding of typed_port: the chapter API's names, and the two hooks.

PYTHONPATH=examples pi-conformance run --impl python:typed_port.binding
"""

from typing import Any

import typed_port as port
from typed_port import wire

to_impl, to_json = wire.from_json, wire.to_json  # JSON input -> the port's objects, and back
text_of, system_message_text = port.message_text, port.system_text
current_system_message, current_system_prompt = port.replay_system, port.system_prompt
text, user_message = port.make_text, port.make_user
EventStream, AssistantMessageEventStream = port.Channel, port.ModelChannel


def assistant_message(content: list[Any], stop_reason: str = "stop", overrides: dict[str, Any] | None = None) -> Any:
    return port.make_assistant(content, stop_reason, **port.options_from(overrides or {}))


class ScriptedModel(port.ScriptedLLM):
    def stream(self, context: Any, signal: Any = None) -> Any:
        return self.play(context, signal)

    @property
    def requests(self) -> list[Any]:
        return self.history


class AbortController(port.CancelSource):
    abort = port.CancelSource.cancel

    @property
    def signal(self) -> Any:
        return self.token
