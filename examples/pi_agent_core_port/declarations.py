"""How the transcript declares tools (spec/pi-agent-core-1/spec.md, PAC-DECL-1; upstream ``declareToolChanges``).

``context["tools"]`` is what the loop can execute; the transcript's system messages declare what
the model may call. Before a request, the difference becomes ``toolsAdded`` / ``toolsRemoved`` on
a system message: the last system message among the pending ones gets them, or a new one is
inserted before the first pending message that is not a system message.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ._pi_ai import pi_ai
from .clock import now_ms


def to_tool_declaration(tool: Any) -> dict[str, Any]:
    """What the model is told about a tool (an executable tool object, or a declaration dict)."""

    def read(name: str) -> Any:
        return tool.get(name) if isinstance(tool, dict) else getattr(tool, name, None)

    return {"name": read("name"), "description": read("description"), "parameters": copy.deepcopy(read("parameters"))}


def _same(left: Any, right: Any) -> bool:
    # JSON text in key order, as upstream compares JSON.stringify of both declarations.
    return json.dumps(to_tool_declaration(left)) == json.dumps(to_tool_declaration(right))


def tool_state_changes(previous: list[Any], current: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(added, removed) between two tool states; a changed definition is removed and added again."""
    before = {to_tool_declaration(tool)["name"]: tool for tool in previous}
    after = {to_tool_declaration(tool)["name"]: tool for tool in current}
    added = [to_tool_declaration(tool) for name, tool in after.items() if name not in before or not _same(before[name], tool)]
    removed = [{"name": name} for name, tool in before.items() if name not in after or not _same(tool, after[name])]
    return added, removed


def _with_changes(message: dict[str, Any], added: list[Any], removed: list[Any]) -> dict[str, Any]:
    """A copy of a system message with its tool fields replaced; an empty list leaves the field out."""
    rest = {key: value for key, value in message.items() if key not in ("toolsAdded", "toolsRemoved")}
    return {**rest, **({"toolsAdded": added} if added else {}), **({"toolsRemoved": removed} if removed else {})}


def declare_tool_changes(context: dict[str, Any], pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``pending`` with the tool declaration the model needs before the next request (the very list when none)."""
    system_index = next((i for i in range(len(pending) - 1, -1, -1) if pending[i].get("role") == "system"), -1)
    holder = pending[system_index] if system_index >= 0 else None
    baseline = [_with_changes(m, [], []) if i == system_index else m for i, m in enumerate(pending)] if holder else pending
    declared = pi_ai.get_current_tools([*context["messages"], *baseline])
    added, removed = tool_state_changes(declared, list(context.get("tools") or []))
    if holder is not None:
        if not added and not removed and not holder.get("toolsAdded") and not holder.get("toolsRemoved"):
            return pending
        return [_with_changes(holder, added, removed) if i == system_index else m for i, m in enumerate(baseline)]
    if not added and not removed:
        return pending
    update = _with_changes({"role": "system", "content": "", "timestamp": now_ms()}, added, removed)
    index = next((i for i, message in enumerate(pending) if message.get("role") != "system"), len(pending))
    return [*pending[:index], update, *pending[index:]]
