"""The Adapter interface: how the runner reaches an implementation under test.

The runner reaches every adapter one way: :meth:`Adapter.perform`, for an operation of any
profile (``model/profiles.py`` lists them). It takes the case's JSON ``input`` (and, for
scenarios, its ``steps``) and returns the JSON *observation* described in
``spec/fixture-format.md``. Transports (in-process Python, a JSON-lines program, the
course's Node.js projects) are all adapters: one that forwards operations (a program)
overrides ``perform``; an in-process binding has a method named after each operation it
implements, which the default ``perform`` finds.
"""

from __future__ import annotations

import threading

from conformance.common.jsontypes import JsonObject
from conformance.model.profiles import ALL_OPERATIONS, ALL_SCENARIO_OPERATIONS

#: How long a waiting step (``consume``, ``result``) may wait before it reports what it saw,
#: when idleness cannot be observed (spec/protocol.md, "Settling"); sent in the handshake.
DEFAULT_SETTLE_DEADLINE_S = 0.25

_calls = threading.local()


def track_abandonment(call_abandoned: threading.Event) -> None:
    """Mark the calling thread's case as given up once ``call_abandoned`` is set (by the runner, on a timeout or Ctrl-C)."""
    _calls.abandoned = call_abandoned


def call_abandoned() -> bool:
    """True when the runner gave up the case this thread runs: an adapter starts no new work for it.

    A transport checks it before it sends a request whose answer nobody will read; without it,
    a case given up while its program was still starting would be sent once the start finished.
    """
    abandoned: threading.Event | None = getattr(_calls, "abandoned", None)
    return abandoned is not None and abandoned.is_set()


class AdapterFailure(Exception):
    """Base of the ways an adapter can fail to produce an observation."""


class OperationNotSupported(AdapterFailure):
    """The implementation does not offer this operation (yet): the case is skipped."""


class ImplementationThrew(AdapterFailure):
    """The implementation raised where the spec expects a value: the case fails."""


class ImplementationHung(AdapterFailure):
    """The operation can never finish: it was pending while the implementation's event loop was idle. The case fails."""


class HarnessError(AdapterFailure):
    """No observation could be obtained (crash, protocol error, broken adapter): the case errors."""


class HarnessTimeout(HarnessError):
    """The implementation did not answer in time outside a case's own timeout (its handshake, say)."""


class GaveUp(AdapterFailure):
    """The adapter did not try the case because the implementation kept timing out on it: the case fails."""


class NotTried(HarnessError):
    """The adapter did not try the case because the implementation kept exiting on its operation: the case errors."""


class NotStarted(HarnessError):
    """The adapter did not start the implementation again: loading it failed in an earlier start. The case errors, not run."""


class Adapter:
    """Base class of every adapter: :meth:`perform` is how the runner reaches it, for any operation of any profile."""

    #: A short name for reports, e.g. ``reference`` or the program's own name.
    name: str = "adapter"
    #: The implementation's version, if it reports one.
    version: str = ""
    #: How the implementation's code was confined: ``bwrap`` (the sandbox) or ``none``
    #: (in process, or a program running unconfined as the grader's user).
    isolation: str = "none"
    #: The profile the implementation implements (``course``, ``pi-ai-1``), when it says so; None: not stated.
    profile: str | None = None
    #: Features (spec/features.yaml) the implementation says it does not have; their cases are skipped, "not claimed".
    unclaimed_features: tuple[str, ...] = ()
    #: True only for the bundled reference in process: its observations are built by our own binding
    #: from our own code, so they are not checked against the observation schema again.
    #: Anything that crosses a process boundary is always checked.
    observations_trusted: bool = False

    def perform(self, operation: str, input: JsonObject, steps: list[JsonObject] | None = None) -> JsonObject:
        """Perform ``operation`` (of any profile) on ``input`` and the scenario's ``steps``: its observation.

        This default calls the adapter's method named after the operation: ``name(input, steps)``
        for a scenario, ``name(input)`` otherwise; an adapter without one does not implement it.
        """
        scenario = is_scenario(operation)
        method = getattr(self, operation, None)
        if method is None or not callable(method):
            raise OperationNotSupported(f"{self.name} does not implement {operation}")
        observation: JsonObject = method(input, steps or []) if scenario else method(input)
        return observation

    def prepare(self, operation: str, lab: str) -> None:
        """Called before each case, outside its timeout: start or check the implementation.

        Raise :class:`OperationNotSupported` to skip the case, :class:`HarnessError` when the
        implementation cannot be reached.
        """

    def cancel(self) -> None:
        """Called when an operation overran its timeout: stop it if the transport can."""

    def close(self) -> None:
        """Release whatever the adapter holds (processes, threads)."""


def is_scenario(operation: str) -> bool:
    """Whether ``operation`` (of any profile) is a scenario, which takes steps; :class:`HarnessError` for no known operation."""
    if operation not in ALL_OPERATIONS:
        raise HarnessError(f"unknown operation {operation!r}")
    return operation in ALL_SCENARIO_OPERATIONS
