"""Turn an ``--impl`` string into an adapter: the registry's (:mod:`conformance.adapters.kinds`) shorthands."""

from __future__ import annotations

from conformance.adapters.kinds import IMPL_FORMS, ImplSpecError, parse_impl, resolve_adapter
from conformance.adapters.kinds.python import import_target

__all__ = ["IMPL_FORMS", "ImplSpecError", "import_target", "resolve_adapter", "untrusted_in_process"]


def untrusted_in_process(impl: str, trust_python: bool) -> str | None:
    """Why grading must refuse ``impl`` (code run in the grader's process without ``--trust-python``), or None."""
    return parse_impl(impl).trust_problem(trust_python)
