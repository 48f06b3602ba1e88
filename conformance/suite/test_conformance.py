"""Every fixture case is one test; its id is the case id."""

from pytest_cases import parametrize_with_cases

from conformance.adapters.interface import Adapter
from conformance.commands.pytest_plugin import RunState, case_functions, check_case
from conformance.model.cases import BrokenCase, Case


@parametrize_with_cases("entry", cases=case_functions())
def test_case(entry: Case | BrokenCase, conformance_adapter: Adapter, conformance_state: RunState) -> None:
    check_case(entry, conformance_adapter, conformance_state)
