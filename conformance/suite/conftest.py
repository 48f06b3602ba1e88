"""Registers the pi-conformance options, markers and reporting for the suite."""

from conformance.commands.pytest_plugin import (  # noqa: F401 - pytest discovers hooks by name
    conformance_adapter,
    conformance_state,
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtestloop,
    pytest_terminal_summary,
    pytest_unconfigure,
)
