"""The chapter 09 reducer operation of the in-process binding: ``reduce_agent_state`` (Lab 9.1).

A binding for it exposes ``reduce_agent_state(state, event)``, the course's
``reduceAgentState``: an ``AgentState`` and an ``AgentEvent`` as plain dicts with the IR's
field names (or the port's own objects through ``to_impl``/``to_json``), returning the new state.

The observation (spec/fixture-format.md, "reduce_agent_state"):

``value``              the returned state, serialized right after the call
``same_object``        whether the returned state is the very state object given
``input_unchanged``    whether the given state and event are as they were before the call
``messages_detached``  whether the returned state's ``messages`` stay as they were when the
                       adapter, after the call, changes every message it gave (each text, a
                       system message's content and sections) and appends one to every
                       messages array it gave; None when the port's objects could not be changed
"""

from __future__ import annotations

from typing import Any

from conformance.adapters.binding_part import BindingPart
from conformance.adapters.port_calls import call_port
from conformance.common.jsontypes import JsonObject, JsonValue

#: What the adapter writes into the inputs after the call, to see whether the state shares them.
SCRIBBLE = "changed by the caller after the reduce"


class AgentStateOperations(BindingPart):
    """The ``reduce_agent_state`` operation; :class:`~conformance.adapters.binding.BindingAdapter` supplies the helpers."""

    name: str = "python"

    def reduce_agent_state(self, input: JsonObject) -> JsonObject:
        """One ``reduceAgentState(state, event)``: the new state, its identity, and what it shares with the inputs."""
        function = self._api("reduce_agent_state")
        state, event = self.to_impl(input["state"]), self.to_impl(input["event"])
        before = (self._fingerprint(state), self._fingerprint(event))
        returned = call_port(function, "reduce_agent_state", state, event)
        value = self.to_json(returned, "the state reduce_agent_state() returned")
        unchanged = (self._fingerprint(state), self._fingerprint(event)) == before
        changed = scribble_messages(state) + scribble_event(event)
        after = self.to_json(returned, "the returned state, once the inputs were changed")
        detached: JsonValue = None
        if changed and isinstance(value, dict) and isinstance(after, dict):
            detached = after.get("messages") == value.get("messages")
        return {"value": value, "same_object": returned is state, "input_unchanged": unchanged, "messages_detached": detached}


def scribble_event(event: Any) -> int:
    """Change what an event carries the caller could still hold: its message, system patch or result's messages."""
    if not isinstance(event, dict):
        return 0
    changed = sum(scribble_message(event[key]) for key in ("message", "system") if isinstance(event.get(key), dict))
    result = event.get("result")
    return changed + (scribble_messages(result) if isinstance(result, dict) else 0)


def scribble_messages(holder: Any) -> int:
    """Change every message of ``holder["messages"]`` and append one more; the number of changes made."""
    messages = holder.get("messages") if isinstance(holder, dict) else None
    if not isinstance(messages, list):
        return 0
    changed = sum(scribble_message(message) for message in messages)
    messages.append({"role": "user", "content": [{"type": "text", "text": SCRIBBLE}], "timestamp": 0})
    return changed + 1


def scribble_message(message: Any) -> int:
    """Overwrite a message's texts (a system message's content and sections); the number of changes made."""
    if not isinstance(message, dict):
        return 0
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = SCRIBBLE
        sections = message.get("sections")
        if isinstance(sections, dict):
            sections[SCRIBBLE] = SCRIBBLE
        return 1
    blocks = [block for block in content if isinstance(block, dict) and block.get("type") == "text"] if isinstance(content, list) else []
    for block in blocks:
        block["text"] = SCRIBBLE
    return len(blocks)
