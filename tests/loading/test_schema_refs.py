"""Schema definitions are found by every form of reference the loader's checks use."""

from __future__ import annotations

import pytest

from conformance.loading.schema_errors import resolve_ref


@pytest.mark.parametrize(
    "ref",
    [
        "ModelEvent",  # a bare name: the course IR's definition (the expected-key checks ask this way)
        "AgentContext",
        "#/$defs/Matcher",  # the course fixture schema's own
        "ir.schema.json#/$defs/Usage",
        "pi-ai-1-ir.schema.json#/$defs/AssistantMessage",
        "pi-ai-1-expected-ir.schema.json#/$defs/AssistantMessage",  # a generated schema: its IR's keys
    ],
)
def test_each_form_of_reference_finds_its_definition(ref: str) -> None:
    assert resolve_ref(ref), ref


def test_an_unknown_name_finds_nothing() -> None:
    assert resolve_ref("NoSuchDefinition") == {}
