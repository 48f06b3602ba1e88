"""What a ``run_agent_loop`` case scripts: the model, the tools, an injected executor, and their gates.

All of it is the adapter's own, never student code (spec/fixture-format.md, "Scenarios"):

- :class:`LoopModel` plays the case's model turns with the reference ``ScriptedModel``
  (chapter 04) and records every request as it was when ``stream()`` was called;
  a turn ``{throw: MESSAGE}`` makes ``stream()`` raise instead.
- :class:`LoopTool` is a tool whose ``execute`` plays a script (``wait``, ``progress``,
  ``abort``, ``return``, ``throw``) and records what it received;
  :class:`ScriptedExecutor` is an ``executeToolCall(call, context)`` scripted per call id
  (``return_uncloneable`` resolves with a result whose ``details`` hold a function).
- :class:`World` is what they share: the gates steps release, the run's controller, the
  events the loop emitted and the executions that started.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import reference_impl
from conformance.adapters.interface import HarnessError, ImplementationThrew
from conformance.common.jsontypes import JsonObject, JsonValue


class ScriptedError(Exception):
    """An error a script throws; ``stack`` is what JavaScript would keep beside the message (never to be shown)."""

    def __init__(self, message: str, stack: str | None = None) -> None:
        super().__init__(message)
        self.stack = stack if stack is not None else f"ScriptedError: {message}\n    at script"


def scripted_error(spec: JsonValue) -> ScriptedError:
    """``{throw: MESSAGE}`` or ``{throw: {message, stack?}}`` as an exception."""
    if isinstance(spec, dict):
        stack = spec.get("stack")
        return ScriptedError(str(spec.get("message", "")), stack if isinstance(stack, str) else None)
    return ScriptedError(str(spec))


@dataclass
class ScriptedParts:
    """What every in-process scenario's scripted parts share: the hooks, the run's controller and signal, the gates."""

    to_impl: Callable[[JsonValue], Any]
    to_json: Callable[[Any, str], JsonValue]
    controller: Any
    signal: Any
    gates: dict[str, asyncio.Event] = field(default_factory=dict)

    def gate(self, name: str) -> asyncio.Event:
        """The gate called ``name`` (created closed on first use)."""
        return self.gates.setdefault(name, asyncio.Event())


@dataclass
class World(ScriptedParts):
    """What the scripted parts of one case share with its steps."""

    events: list[Any] = field(default_factory=list)
    received: list[JsonObject] = field(default_factory=list)
    started: Counter[str] = field(default_factory=Counter)

    def identity(self, given: Any, expected: Any) -> str:
        """``same`` for the very object, ``absent`` for none, ``other`` for another one."""
        if given is None:
            return "absent"
        return "same" if expected is not None and given is expected else "other"

    def record(self, tool: str, params: JsonValue, context: Any) -> None:
        """One execution starts: what it received, and that a tool of this name started."""
        call_id = _field(context, "callId")
        self.received.append(
            {
                "tool": tool,
                "params": params,
                "call_id": call_id if isinstance(call_id, str) or call_id is None else repr(call_id),
                "signal": self.identity(_field(context, "signal"), self.signal),
                "report_progress": self.identity(_field(context, "reportProgress"), None),
            }
        )
        self.started[tool] += 1

    def has_started(self, names: list[str]) -> bool:
        """Whether each name has started at least as often as it is listed."""
        return not (Counter(names) - self.started)

    async def play(self, script: list[Any], context: Any) -> Any:
        """Play ``script`` up to its ``return``/``throw``; the action dict that ended it, or None."""
        for action in script:
            if "wait" in action:
                await self.gate(str(action["wait"])).wait()
            elif "progress" in action:
                progress = _field(context, "reportProgress")
                if callable(progress):
                    progress(self.to_impl(action["progress"]))
            elif "abort" in action:
                self.controller.abort()
            elif "throw" in action:
                raise scripted_error(action["throw"])
            else:
                return action
        return None


def _field(context: Any, name: str) -> Any:
    if isinstance(context, dict):
        return context.get(name)
    return getattr(context, name, None)


class LoopTool:
    """A registry tool that plays its script each time it executes (chapter 06's tool shape)."""

    def __init__(self, spec: JsonObject, schema: Any, world: World) -> None:
        self.name = str(spec["name"])
        self.description = str(spec["description"])
        self.schema = schema
        self._script: list[Any] = list(spec.get("script") or [])  # type: ignore[arg-type]
        self._world = world

    async def execute(self, params: Any, context: Any) -> Any:
        """Record, play; ``return`` gives its output, no ``return`` gives ``{content: []}``."""
        world = self._world
        value = world.to_json(params, "the parameters the tool received")
        world.record(self.name, {k: v for k, v in value.items() if v is not None} if isinstance(value, dict) else value, context)
        ending = await world.play(self._script, context)
        if ending is None:
            return {"content": []}
        output = dict(ending["return"])
        output["content"] = world.to_impl(output["content"])
        return output


class ScriptedExecutor:
    """An injected ``executeToolCall(call, context)``: each call id plays its own script."""

    def __init__(self, scripts: JsonObject, world: World) -> None:
        self._scripts = scripts
        self._world = world

    async def __call__(self, call: Any, context: Any = None) -> Any:
        world = self._world
        seen = world.to_json(call, "the call the executor received")
        seen = seen if isinstance(seen, dict) else {}
        call_id, name = seen.get("id"), str(seen.get("name"))
        world.record(name, seen.get("arguments"), {**(context if isinstance(context, dict) else {}), "callId": call_id})
        script: list[Any] = list(self._scripts.get(str(call_id)) or [])  # type: ignore[arg-type]
        ending = await world.play(script, context)
        if ending is not None and "return_uncloneable" in ending:
            # details hold a function: structuredClone cannot copy it (AGENT-LOOP-3)
            return {**world.to_impl(ending["return_uncloneable"]), "details": {"callback": _not_cloneable}}
        if ending is None or "return_result" not in ending:
            raise HarnessError(f"the executor script of call {call_id!r} ends without return_result or throw")
        return world.to_impl(ending["return_result"])


def _not_cloneable() -> str:
    return "not cloneable"


class LoopModel:
    """The case's model: the reference ``ScriptedModel`` behind ``stream(context, {signal})``, recording requests."""

    def __init__(self, turns: list[Any], world: World) -> None:
        self._turns = turns
        self._cursor = 0
        # Only the turns that play: a throwing turn never reaches the scripted model, so its cursor stays aligned.
        self._model = reference_impl.ScriptedModel([turn["message"] for turn in turns if "message" in turn])
        self._world = world
        self.requests: list[JsonValue] = []

    def stream(self, context: Any, options: Any = None) -> Any:
        """Record the request, then play the next turn (or raise for a ``throw`` turn)."""
        try:
            self.requests.append(self._world.to_json(context, "a model request"))
        except ImplementationThrew as error:
            self.requests.append(f"<not a JSON value: {error}>")
        turn = self._turns[self._cursor] if self._cursor < len(self._turns) else {}
        self._cursor += 1
        if "throw" in turn:
            raise scripted_error(turn["throw"])
        return self._model.stream(context, _field(options, "signal"))
