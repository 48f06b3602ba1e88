"""The lookup-table cheat (issue 24): no implementation, only the public fixtures' answers replayed.

The table is recorded once from the reference, one observation per public case, keyed by
the canonical JSON of what the case feeds the implementation (operation, input, steps
without their expectations). A request whose inputs are in the table gets the recorded
answer; any other gets junk. Against the public fixtures it passes everything; against
inputs it has never seen, nothing.

``pi-conformance run --impl python:tests.support.fakes.lookup_table:create`` runs it as a submission.
"""

from __future__ import annotations

import copy

from conformance.adapters.interface import Adapter, is_scenario
from conformance.adapters.reference import create as create_reference
from conformance.common.jsontypes import JsonObject
from conformance.loading.loader import load_suite
from conformance.model.cases import Case
from conformance.yamlio.canonical import inputs_key

JUNK = "¯\\_(ツ)_/¯"


class LookupTable(Adapter):
    """Answers recognised inputs from its table, and anything else with junk."""

    name = "lookup-table"

    def __init__(self, table: dict[str, JsonObject]) -> None:
        self.table = table
        self.recognised = 0
        self.unknown = 0

    def perform(self, operation: str, input: JsonObject, steps: list[JsonObject] | None = None) -> JsonObject:
        key = inputs_key(operation, input, tuple(steps or ()))
        if key in self.table:
            self.recognised += 1
            return copy.deepcopy(self.table[key])
        self.unknown += 1
        if not is_scenario(operation):
            return {"value": JUNK, "input_unchanged": True, "section_order": None}
        return {"steps": [{"threw": None} for _ in steps or []]}


def record(cases: list[Case]) -> dict[str, JsonObject]:
    """The reference's observation of each case, by the case's inputs."""
    reference = create_reference()
    try:
        table: dict[str, JsonObject] = {}
        for case in cases:
            bare = [{key: value for key, value in step.items() if key != "expect"} for step in case.steps]
            table[inputs_key(case.operation, case.input, case.steps)] = reference.perform(case.operation, case.input, bare)
        return table
    finally:
        reference.close()


def create() -> LookupTable:
    """A lookup table of every public (bundled) course case."""
    return LookupTable(record(load_suite().cases))
