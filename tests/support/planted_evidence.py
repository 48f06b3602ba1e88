"""Planted evidence (issue 32): one deliberate lab 4.1 failure, meant to excuse lab 4.2's real failures.

The real code has one lab 4.2 bug: an error turn (SM-ERR-2, played like a normal turn) pushes
the same partial object with every event, so earlier events change as later ones arrive. The
cheats add a lab 4.1 failure with the same symptom (``events[0](start).partial.content``), so
that lab 4.2's failures look inherited from lab 4.1:

- ``first-call``: the first ``stream()`` call of each adapter (each process) that is a model's
  first call, with no abort signal, on a script of two or more turns and no error turn, shares
  partials (lab 4.2's aborts, error turns and exhaustion come first in case order; this lands on
  a lab 4.1 case);
- ``recognised-script``: a call whose script is the one of a known public lab 4.1 case does.

Each is an ``--impl python:tests.support.planted_evidence:<name>`` factory (a fresh binding
per adapter, as a fresh process would be).
"""

from __future__ import annotations

import types
from typing import Any

import reference_impl
from conformance.adapters.binding import BindingAdapter
from conformance.adapters.interface import Adapter
from conformance.loading.loader import load_suite
from tests.support import variants

#: The public lab 4.1 case whose script ``recognised-script`` recognises.
RECOGNISED = "sm-tool-text-then-read-readme"

_SHARING: Any = next(variant.binding for variant in variants.VARIANTS if variant.name == "partials-shared-between-events").ScriptedModel
_ERROR_REASONS = ("error", "aborted")


def _script(case_id: str) -> Any:
    return next(case.input["turns"] for case in load_suite().cases if case.id == case_id)


class _RealModel(reference_impl.ScriptedModel):
    """The real code: error turns share one partial between their events (a lab 4.2 bug)."""

    def _play(self, stream: Any, message: Any) -> None:
        if message["stopReason"] in _ERROR_REASONS:
            _SHARING._play(self, stream, message)
        else:
            super()._play(stream, message)


def _binding(model: type) -> types.SimpleNamespace:
    namespace = {name: getattr(reference_impl, name) for name in reference_impl.__all__}
    return types.SimpleNamespace(**{**namespace, "ScriptedModel": model})


def real() -> Adapter:
    """The real code alone."""
    return BindingAdapter(_binding(_RealModel), "real")


def first_call() -> Adapter:
    """The real code, plus shared partials on this adapter's first unsignalled call of a script with no error turn."""
    planted = {"done": False}

    class _Model(_RealModel):
        def __init__(self, turns: Any) -> None:
            super().__init__(turns)
            self._normal = len(turns) >= 2 and all(turn.get("stopReason") not in _ERROR_REASONS for turn in turns)

        def stream(self, context: Any, signal: Any = None) -> Any:
            self._signalled = signal is not None or bool(self.requests)
            return super().stream(context, signal)

        def _play(self, stream: Any, message: Any) -> None:
            if not planted["done"] and self._normal and not self._signalled:
                planted["done"] = True
                _SHARING._play(self, stream, message)
            else:
                super()._play(stream, message)

    return BindingAdapter(_binding(_Model), "first-call")


def recognised_script() -> Adapter:
    """The real code, plus shared partials whenever the script is the one of :data:`RECOGNISED`."""
    known = _script(RECOGNISED)

    class _Model(_RealModel):
        def __init__(self, turns: Any) -> None:
            super().__init__(turns)
            self._recognised = turns == known

        def _play(self, stream: Any, message: Any) -> None:
            if self._recognised:
                _SHARING._play(self, stream, message)
            else:
                super()._play(stream, message)

    return BindingAdapter(_binding(_Model), "recognised-script")


CHEATS = {"first-call": first_call, "recognised-script": recognised_script}
