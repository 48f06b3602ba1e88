"""The scenario builder of :mod:`conformance.fuzz.strategies_agent`: one ``run_agent`` program being drawn, and its parts.

:class:`Scenario` collects the model's turns, the executor's scripts per call id, the scripted
subscribers and the steps of one program in spec/fixture-format.md's ``run_agent`` vocabulary,
and tags it with its lab and kind of scenario.
"""

from __future__ import annotations

from typing import cast

from hypothesis import strategies as st

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.strategies import Program, text_block, texts
from conformance.fuzz.strategies_loop import UniqueIds, call_block, executor_script, rarely, texts_only, turn

#: "" often: an empty prompt opens no system message (AGENT-RUN-1), a port's easiest slip.
system_prompts = st.sampled_from(["", "", "BASE"]) | texts
section_names = st.sampled_from(["rules", "style"])
sections = st.dictionaries(section_names, texts | st.none(), min_size=1, max_size=2)
few = st.integers(1, 2)
#: Three draws in four (``rarely``'s complement, built once).
usually = rarely.map(lambda once: not once)
#: What a lab-9.3 subscriber does on an event it names (a throw ends the rule's actions).
observing_actions = st.sampled_from(["snapshot", "record", "throw", "throw"])
#: The events a scripted subscriber's rule may name: ``(type, loop event type or None)``.
WATCHED = st.sampled_from(
    [
        ("run_start", None),
        ("run_end", None),
        ("loop", "assistant_message"),
        ("loop", "turn_end"),
        ("loop", "tool_start"),
        ("loop", "tool_end"),
    ]
)
#: The events a careless subscriber's ``mutate_event`` changes something of.
MUTATED = st.sampled_from([("run_start", None), ("run_end", None), ("loop", "assistant_message")])
early_stop_reasons = st.sampled_from(["error", "length"])
#: The texts of a turn the model changes later: one at least, or there is nothing to change.
some_texts = st.lists(text_block(), min_size=1, max_size=2)


class Scenario:
    """One program being drawn: its turns, executor, subscribers, steps and tags."""

    def __init__(self, draw: st.DrawFn, lab: str, kind: str) -> None:
        self.draw = draw
        self.ids = UniqueIds(draw)
        self.turns: list[JsonObject] = []
        self.executor: JsonObject = {}
        self.subscribers: list[JsonObject] = []
        self.steps: list[JsonValue] = []
        self.agent: JsonObject = {}
        self.tags = {f"lab:{lab}", f"kind:{kind}"}
        self.prompts = 0

    def text(self, reason: str = "stop", **extra: JsonValue) -> JsonObject:
        """A model turn of text ending ``reason`` (``gate``, ``honor_abort``, ``changed_later`` as given)."""
        played = turn(self.draw, cast(list[JsonValue], self.draw(some_texts if extra.get("changed_later") else texts_only)), reason)
        return {**extra, **played}

    def tool_round(self, gate: str | None = None, uncloneable: bool = False, **extra: JsonValue) -> JsonObject:
        """A toolUse turn of one call, which the executor answers (after ``gate`` opens, when given)."""
        call_id, name = self.ids.call_id(), self.ids.name()
        script = executor_script(self.draw, call_id, name, gate, throws=False)
        if uncloneable:
            script[-1] = {"return_uncloneable": cast(JsonObject, script[-1])["return_result"]}
        self.executor[call_id] = cast(JsonValue, script)
        blocks = self.draw(some_texts if extra.get("changed_later") else texts_only)
        content: list[JsonValue] = [*cast(list[JsonValue], blocks), call_block(call_id, name, {})]
        return {**extra, **turn(self.draw, content, "toolUse")}

    def rounds(self, most: int) -> None:
        """Zero to ``most`` tool round trips the executor answers at once."""
        self.turns.extend(self.tool_round() for _ in range(self.draw(st.integers(0, most))))

    def prompt(self, name: str | None = None, **options: JsonValue) -> str:
        """A prompt step (not awaited); its name."""
        self.prompts += 1
        name = name or f"p{self.prompts}"
        self.steps.append({"prompt": {"as": name, "text": self.draw(texts), **options}})
        return name

    def run(self, name: str | None = None, **options: JsonValue) -> str:
        """A prompt step and its ``await_prompt``."""
        name = self.prompt(name, **options)
        self.steps.append({"await_prompt": name})
        return name

    def system_prompt(self, chance: st.SearchStrategy[bool]) -> None:
        """The constructor's ``systemPrompt`` (``""`` often) when ``chance`` draws True, and a snapshot of the new Agent."""
        if self.draw(chance):
            self.agent["system_prompt"] = self.draw(system_prompts)
            self.tags.add("system-prompt")
            self.steps.append({"snapshot": "start"})

    def maybe(self, step: JsonValue) -> None:
        """``step``, one time in two."""
        if self.draw(st.booleans()):
            self.steps.append(step)

    def subscriber(self, name: str, rules: list[JsonObject], subscribed: bool = True) -> None:
        self.subscribers.append({"name": name, **({} if subscribed else {"subscribed": False}), "rules": cast(JsonValue, rules)})

    def program(self) -> Program:
        input: JsonObject = {}
        if self.agent:
            input["agent"] = self.agent
        input["model"] = {"turns": cast(JsonValue, self.turns)}
        if self.executor:
            input["executor"] = self.executor
        if self.subscribers:
            input["subscribers"] = cast(JsonValue, self.subscribers)
        input["steps"] = self.steps
        return Program("run_agent", input, tags=self.tags)


def when(watched: tuple[str, str | None], run_id: int | None = None) -> JsonObject:
    kind, loop = watched
    return {"type": kind, **({"runId": run_id} if run_id is not None else {}), **({"loop": loop} if loop else {})}


def queue_actions(draw: st.DrawFn, steer: bool, follow: bool) -> list[JsonValue]:
    """One to three steer / follow_up actions (or steps) of the kinds allowed, in a drawn order."""
    kinds = [kind for kind, allowed in (("steer", steer), ("follow_up", follow)) if allowed]
    return [{draw(st.sampled_from(kinds)): draw(texts)} for _ in range(draw(st.integers(1, 3)))]
