"""Profiles: which standard a fixture case belongs to.

``course`` is the course's chapters 03 to 07 and 09 (``spec/spec.md``, the default); ``pi-ai-1`` is the
published upstream library ``@earendil-works/pi-ai`` 1.x (``spec/pi-ai-1/spec.md``);
``pi-agent-core-1`` is upstream's agent runtime ``@earendil-works/pi-agent-core`` 1.x
(``spec/pi-agent-core-1/spec.md``). A fixture
file states its profile (``profile:``, default ``course``); a run checks one profile at a
time, and an implementation may say which profile it implements (``Adapter.profile``, the
``profile`` of the JSON-lines handshake), so that checking it against the other one fails
with a message that names the difference instead of a pile of unrelated divergences.

This module is a leaf: it imports nothing from the rest of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from conformance.model.agent_class_features import AGENT_CLASS_FUNCTIONS
from conformance.model.agent_features import PI_AGENT_CORE_1_FUNCTIONS
from conformance.model.function_features import PI_AI_1_FUNCTIONS
from conformance.model.input_features import PI_AI_1_INPUT_FEATURES, InputFeature


@dataclass(frozen=True)
class Profile:
    """One profile: its clause document, schemas and the areas (features) its cases fall in."""

    name: str
    #: What the profile checks, in a few words, for help texts ("upstream @earendil-works/pi-ai 1.x").
    summary: str
    #: The clause document, relative to the data root.
    spec: str
    #: The fixture-file schema's file name under ``spec/schemas``.
    fixture_schema: str
    #: The observation schema's file name under ``spec/schemas``.
    observation_schema: str
    #: Every clause id of the profile starts with one of these.
    clause_prefixes: tuple[str, ...]
    #: Operations written as steps (compared step by step).
    scenario_operations: frozenset[str]
    #: Every operation of the profile.
    operations: frozenset[str]
    #: The areas of the profile, each a feature an implementation can opt out of; in report order.
    features: tuple[str, ...] = ()
    #: Finer features inside the areas (pi-ai-1: one per upstream function; pi-agent-core-1: its entry points,
    #: config functions and 1.x behaviours), opted out of alone.
    functions: tuple[str, ...] = ()
    #: Classes of inputs a port's types may not hold (pi-ai-1: system-role messages), each a feature
    #: the loader gives the cases whose input holds one (conformance/model/input_features.py).
    input_features: tuple[InputFeature, ...] = ()
    #: What a report calls the groups cases are summed up by.
    group_label: str = "lab"
    #: The rubric ``pi-conformance grade --profile NAME`` uses without ``--rubric``: a file
    #: name under ``conformance/grading``.
    default_rubric: str = "default_rubric.yaml"
    #: The published package (name, version) the expected values were read from, when the
    #: reference is one (pi-ai-1: upstream 1.6.0, the spec's "Profile version" line); None when
    #: the reference is bundled. Only that package at that version is "the reference".
    reference_package: tuple[str, str] | None = None
    #: Which operation's function uses which others' (``text_of`` calls ``systemMessageText``), as
    #: ``(operation, (used, ...))``: a bug in a used function fails its users' cases too, and is
    #: reported as one cause, the used function's, first (conformance/judging/root_causes.py).
    uses: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: The bundled port in Python that passes every case, as ``MODULE:ATTR`` importable with
    #: ``PYTHONPATH=examples`` in a checkout (the porting guide's worked example); None without one.
    example_port: str | None = None

    @property
    def opt_outs(self) -> tuple[str, ...]:
        """Every feature of the profile an implementation can leave unclaimed: areas, functions, input classes."""
        return (*self.features, *self.functions, *(feature.name for feature in self.input_features))

    def uses_transitively(self, operation: str) -> frozenset[str]:
        """The operations whose functions ``operation``'s function calls, directly or through others."""
        table = dict(self.uses)
        found: set[str] = set()
        pending = list(table.get(operation, ()))
        while pending:
            used = pending.pop()
            if used not in found:
                found.add(used)
                pending.extend(table.get(used, ()))
        return frozenset(found)


COURSE: Final = Profile(
    name="course",
    summary="the course's chapters",
    spec="spec/spec.md",
    fixture_schema="fixture-file.schema.json",
    observation_schema="observation.schema.json",
    clause_prefixes=("IR-", "SYS-", "STREAM-", "AMS-", "EV-", "SM-", "PROV-", "TOOL-", "LOOP-", "AGENT-"),
    scenario_operations=frozenset({"event_stream", "scripted_model", "provider_model_stream", "provider_fetch_stream", "tool_registry"}),
    operations=frozenset(
        {
            "text_of",
            "system_message_text",
            "current_system_message",
            "current_system_prompt",
            "make_text",
            "make_user_message",
            "make_assistant_message",
            "event_stream",
            "scripted_model",
            "to_provider_messages",
            "to_provider_tools",
            "provider_model_stream",
            "provider_fetch_stream",
            "object_schema",
            "tool_registry",
            "execute_tool_call",
            "run_agent_loop",
            "reduce_agent_state",
            "run_agent",
        }
    ),
    # From the course's code: textOf of a system message is systemMessageText; currentSystemPrompt
    # renders currentSystemMessage's result with systemMessageText; ScriptedModel plays into an
    # AssistantMessageEventStream; the Agent reduces its state with reduceAgentState (both in
    # agent.ts, so lab isolation cannot give it the reference's).
    uses=(
        ("text_of", ("system_message_text",)),
        ("current_system_prompt", ("system_message_text", "current_system_message")),
        ("scripted_model", ("event_stream",)),
        ("run_agent", ("reduce_agent_state",)),
    ),
)

PI_AI_1: Final = Profile(
    name="pi-ai-1",
    summary="upstream @earendil-works/pi-ai 1.x",
    example_port="pi_ai_port.conformance:ADAPTER",
    reference_package=("@earendil-works/pi-ai", "1.6.0"),
    spec="spec/pi-ai-1/spec.md",
    fixture_schema="pi-ai-1-fixture-file.schema.json",
    observation_schema="pi-ai-1-observation.schema.json",
    clause_prefixes=("PA-",),
    scenario_operations=frozenset({"event_stream", "faux_provider"}),
    operations=frozenset(
        {
            "content_text",
            "system_message_text",
            "render_system_message_update",
            "current_system_message",
            "current_system_prompt",
            "current_tools",
            "normalize_context",
            "faux_block",
            "faux_message",
            "event_stream",
            "faux_provider",
        }
    ),
    features=("messages", "system-replay", "event-streams", "faux-provider"),
    functions=PI_AI_1_FUNCTIONS,
    input_features=PI_AI_1_INPUT_FEATURES,
    group_label="area",
    default_rubric="default_rubric_pi-ai-1.yaml",
)

PI_AGENT_CORE_1: Final = Profile(
    name="pi-agent-core-1",
    summary="upstream @earendil-works/pi-agent-core 1.x",
    example_port="pi_agent_core_port.conformance:ADAPTER",
    reference_package=("@earendil-works/pi-agent-core", "1.6.0"),
    spec="spec/pi-agent-core-1/spec.md",
    fixture_schema="pi-agent-core-1-fixture-file.schema.json",
    observation_schema="pi-agent-core-1-observation.schema.json",
    clause_prefixes=("PAC-",),
    # agent_loop's steps are the agent tier's vocabulary, inside its input (spec/fixture-format.md,
    # "Agent scenarios"): one observation for the whole run, not one per step.
    scenario_operations=frozenset(),
    # agent plays one upstream Agent the same way (spec/pi-agent-core-1/spec.md, section 7).
    operations=frozenset({"agent_loop", "agent"}),
    features=("loop", "tools", "hooks", "queues", "abort", "agent"),
    functions=(*PI_AGENT_CORE_1_FUNCTIONS, *AGENT_CLASS_FUNCTIONS),
    group_label="area",
    default_rubric="default_rubric_pi-agent-core-1.yaml",
)

PROFILES: Final = {profile.name: profile for profile in (COURSE, PI_AI_1, PI_AGENT_CORE_1)}
DEFAULT_PROFILE: Final = COURSE.name
#: The operations of every profile.
ALL_OPERATIONS: Final = frozenset().union(*(profile.operations for profile in PROFILES.values()))
#: Scenario operations of every profile.
ALL_SCENARIO_OPERATIONS: Final = frozenset().union(*(profile.scenario_operations for profile in PROFILES.values()))


def profiles_in_words() -> str:
    """Every profile with what it checks and how its cases group, for help texts: ``course (default: ...), ... or ...``."""
    words = [
        f"{profile.name} ({'default: ' if profile.name == DEFAULT_PROFILE else ''}{profile.summary}, by {profile.group_label})"
        for profile in PROFILES.values()
    ]
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


class UnknownProfile(ValueError):
    """A profile name that no profile has."""


def get_profile(name: str) -> Profile:
    """The profile called ``name``; a clear error naming the known ones otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise UnknownProfile(f"unknown profile {name!r}; known profiles: {', '.join(PROFILES)}") from None


def mismatch_message(implementation: str, implemented: str, wanted: str, how: str | None = None) -> str:
    """The message of a case run against an implementation of another profile: how to check either one.

    ``how``: how to name an implementation of ``wanted`` (the kinds' examples,
    :func:`conformance.adapters.kinds.impl_examples`, which this model cannot import).
    """
    how = how or f"an implementation of profile {wanted!r}"
    option = "" if implemented == DEFAULT_PROFILE else f" --profile {implemented}"
    return (
        f"profile mismatch: {implementation} implements profile {implemented!r}, but this case belongs to profile {wanted!r}. "
        f"To check {wanted} cases, name an implementation of it: {how}. To check {implementation} itself, run it with"
        f"{option or ' no --profile'} ({implemented} cases). "
        f"The two profiles differ on purpose: spec/spec.md is the course, spec/pi-ai-1/spec.md is upstream pi-ai 1.x"
    )
