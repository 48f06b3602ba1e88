"""The ``cmd:`` transport: any program that speaks the JSON-lines protocol (spec/protocol.md).

This module is the adapter and its give-up policy; the program's process is a
:class:`~conformance.adapters.session.Session`, one message and its response are
:func:`~conformance.adapters.exchange.exchange`, and the protocol's lines are read and checked by
:mod:`conformance.adapters.protocol`.

Student code is hostile by accident, so every way a program can misbehave (crash, hang,
garbage on stdout, a wrong sequence number, a huge line, chatter before the handshake)
errors only the case in flight; the program is then restarted, handshake replayed, for the
next case. Repeated handshake failures or timeouts stop the retrying, so a run against a
hopeless implementation still ends in bounded time.
"""

from __future__ import annotations

import collections
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from conformance.adapters.exchange import NO_STDERR_NOTE, STDERR_NOTE, ProgramExited, exchange
from conformance.adapters.interface import (
    Adapter,
    AdapterFailure,
    GaveUp,
    HarnessError,
    HarnessTimeout,
    ImplementationHung,
    ImplementationThrew,
    NotStarted,
    NotTried,
    OperationNotSupported,
    call_abandoned,
    is_scenario,
)
from conformance.adapters.process_options import ProcessOptions
from conformance.adapters.protocol import PROTOCOL_VERSION
from conformance.adapters.session import Session
from conformance.adapters.stray_output import StrayOutput
from conformance.common.jsontypes import JsonObject
from conformance.common.student_text import QUOTE_LIMIT, cap

MAX_HANDSHAKE_FAILURES = 3
MAX_CONSECUTIVE_TIMEOUTS = 3
MAX_CONSECUTIVE_EXITS = 3
# A safety net only: the runner's per-case timeout cancels a hung request long before this.
_RESPONSE_SAFETY_S = 120.0


def parse_command(command: str) -> list[str]:
    """Split a command line the POSIX way (no shell is ever involved) and resolve the program."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("needs a command line, as in 'node adapter.mjs'")
    resolved = shutil.which(argv[0])
    if resolved is None:
        raise ValueError(f"command not found: {argv[0]!r}")
    return [resolved, *argv[1:]]


#: What an error response's ``kind`` stands for; any other kind is a protocol error.
_REPORTED_ERRORS: dict[str, type[AdapterFailure]] = {
    "not_implemented": OperationNotSupported,
    "threw": ImplementationThrew,
    "hung": ImplementationHung,
    "load_failed": HarnessError,
}


class ProcessAdapter(Adapter):
    """An adapter that talks to a program over the JSON-lines protocol."""

    def __init__(self, options: ProcessOptions, name: str | None = None) -> None:
        self.options = options
        self.name = name or Path(options.argv[0]).name
        self.isolation = options.isolation
        #: What the implementation wrote outside the protocol, over this adapter's life.
        self.stray_output = StrayOutput()
        self._session: Session | None = None
        self._seq = 0
        self._lock = threading.Lock()
        self._hello: JsonObject = {}
        self._handshake_failures = 0
        self._last_handshake_error = ""
        self._last_handshake_timed_out = False
        self._timeouts: collections.Counter[str] = collections.Counter()
        # Per operation: how often in a row the program exited while answering, and the last report.
        self._exits: collections.Counter[str] = collections.Counter()
        self._last_exit: dict[str, str] = {}
        self._in_flight: str | None = None
        self._cancelled = False
        # The program being started (its handshake not answered yet) and whether close() was called:
        # close() must be able to stop a start that holds the lock, and nothing starts after it.
        self._starting: Session | None = None
        self._closed = False
        #: Module -> what happened when loading it ended a process: told to every later start.
        self._failed_modules: dict[str, str] = {}
        #: Why loading the implementation failed in an earlier start, no module named: nothing starts again.
        self._load_failure: str | None = None
        #: How many times the program was started (a crash or a timeout costs a start).
        self.starts = 0
        #: The profile the run checks, sent in the handshake when set (spec/protocol.md).
        self.requested_profile: str | None = None
        #: Called once the program is stopped for good (a built copy's removal, say).
        self.on_close: list[Callable[[], None]] = []

    # -- lifecycle ---------------------------------------------------------------------------

    def prepare(self, operation: str, lab: str) -> None:
        """Start the program (handshake included) and skip what it says it does not support."""
        with self._lock:
            self._ensure_session()
        operations = self._hello.get("operations")
        if isinstance(operations, list) and operation not in operations:
            raise OperationNotSupported(f"{self.name} does not support {operation} (its handshake lists {', '.join(map(str, operations))})")
        labs = self._hello.get("labs")
        if isinstance(labs, list) and lab not in labs:
            raise OperationNotSupported(f"{self.name} does not support lab {lab} (its handshake lists {', '.join(map(str, labs))})")
        if self._timeouts[operation] >= MAX_CONSECUTIVE_TIMEOUTS:
            raise GaveUp(f"not run: {operation} timed out {self._timeouts[operation]} times in a row, so it is not tried again")
        if self._exits[operation] >= MAX_CONSECUTIVE_EXITS:
            raise NotTried(
                f"not run: the implementation exited while answering {operation} {self._exits[operation]} times in a row, "
                f"so it is not tried again; the last time: {self._last_exit[operation]}"
            )

    def cancel(self) -> None:
        """The runner's timeout expired: kill the program; the next case restarts it."""
        session = self._session
        if self._in_flight is not None:
            self._timeouts[self._in_flight] += 1
            self._cancelled = True
        if session is not None:
            session.kill()

    def close(self) -> None:
        """Ask the program to stop, then make sure it has; a closed adapter starts nothing again."""
        self._closed = True
        starting = self._starting
        if starting is not None:
            starting.kill()  # a handshake in progress holds the lock: end it rather than wait for it
        with self._lock:
            session, self._session = self._session, None
            if session is None:
                self._run_on_close()
                return
            if session.alive():
                try:
                    session.send({"seq": self._next_seq(), "op": "stop"})
                    session.process.wait(timeout=self.options.stop_grace_s)
                except (OSError, ValueError, subprocess.TimeoutExpired):
                    pass
            # Always: what the program started may outlive it (or its supervisor, if it killed that).
            session.kill()
        self._run_on_close()

    def _run_on_close(self) -> None:
        callbacks, self.on_close = self.on_close, []
        for callback in callbacks:
            callback()

    def _next_seq(self) -> int:
        seq = self._seq
        self._seq += 1
        return seq

    def _ensure_session(self) -> None:
        """A live program that answered its handshake (and preloaded): the one there is, or a new one.

        A program that dies while preloading a module is started again at once, told not to load
        it: each such start names one more module, so this ends.
        """
        if self._session is not None and self._session.alive():
            return
        if self._session is not None:
            self._session.kill()
            self._session = None
        while True:
            self._check_may_start()
            try:
                session = Session(self.options)
            except OSError as error:
                self._handshake_failed(f"cannot start {self.options.argv[0]}: {error}")
            response = self._handshake(session)
            self._accept_hello(session, response)
            if self._preload(session):
                return

    def _check_may_start(self) -> None:
        """Nothing starts once the run is closing, nor after too many failed handshakes in a row."""
        if self._closed:
            raise HarnessError(f"{self.name} is not started again: the run is closing")
        if self._load_failure is not None:
            raise NotStarted(f"not run: {self._load_failure}")
        if self._handshake_failures >= MAX_HANDSHAKE_FAILURES:
            given_up = HarnessTimeout if self._last_handshake_timed_out else HarnessError
            raise given_up(
                f"{self.name} failed its handshake {self._handshake_failures} times in a row and is not started again; "
                f"last failure: {self._last_handshake_error}"
            )

    def _hello_message(self, session: Session) -> JsonObject:
        hello: JsonObject = {
            "seq": self._next_seq(),
            "op": "hello",
            "protocol": PROTOCOL_VERSION,
            "settle_deadline_s": self.options.settle_deadline_s,
            "channel_key": session.channel_key.hex(),
        }
        if self.requested_profile is not None:
            hello["profile"] = self.requested_profile
        if self._failed_modules:
            hello["failed_modules"] = dict(self._failed_modules)
        return hello

    def _handshake(self, session: Session) -> JsonObject:
        """Say hello to a program just started; its answer, or the program stopped and the failure counted."""
        hello = self._hello_message(session)
        self.starts += 1
        self._starting = session
        try:
            if self._closed:  # close() ran before it could see this session: stopped below, unasked
                raise HarnessError("closing")
            return exchange(session, hello, self.options.handshake_timeout_s, "HelloResponse", "the handshake", self.name)
        except HarnessError as error:
            session.kill()
            if self._closed:
                raise HarnessError(f"{self.name} was stopped during its handshake: the run is closing") from None
            self._handshake_failed(str(error), timed_out=isinstance(error, HarnessTimeout))
        except BaseException:  # Ctrl-C while it starts: the program is nobody's to stop but ours
            session.kill()
            raise
        finally:
            self._starting = None

    def _accept_hello(self, session: Session, response: JsonObject) -> None:
        """Take the program's handshake answer: its protocol must be ours; its name, profile and features are noted."""
        if response.get("protocol") != PROTOCOL_VERSION:
            session.kill()
            self._handshake_failures = MAX_HANDSHAKE_FAILURES
            self._handshake_failed(f"it speaks protocol {response.get('protocol')!r}, the runner speaks {PROTOCOL_VERSION}")
        implementation = response.get("implementation")
        if isinstance(implementation, dict) and isinstance(implementation.get("name"), str):
            # Student text: bounded here; escaped wherever it is shown.
            self.name = cap(str(implementation["name"]), QUOTE_LIMIT)
            self.version = cap(str(implementation.get("version", "")), QUOTE_LIMIT)
        stated_profile = response.get("profile")
        self.profile = stated_profile if isinstance(stated_profile, str) else None
        unclaimed = response.get("unclaimed_features")
        self.unclaimed_features = tuple(str(name) for name in unclaimed) if isinstance(unclaimed, list) else ()
        self._hello = response
        self._handshake_failures = 0
        self._session = session

    def _preload(self, session: Session) -> bool:
        """Have a program that offers it import its implementation's modules now, under ``load_timeout_s``.

        This runs while the adapter is prepared, outside any case's timeout: a slow import is
        paid once per process and never by a case. False when the program died (or fell silent)
        while a module loaded: that is charged to the module (:meth:`_load_failed`), and the
        caller starts the program again, which then does not load it.
        """
        if self._hello.get("preload") is not True:
            return True
        message: JsonObject = {"seq": self._next_seq(), "op": "preload"}
        session.loading = None
        try:
            exchange(session, message, self.options.load_timeout_s, "PreloadResponse", "loading the implementation's modules", self.name)
        except HarnessError as error:
            session.kill()
            self._session = None
            if session.loading is None:
                raise self._loading_failed(error) from None
            if session.loading in self._failed_modules:
                raise
            self._load_failed(session.loading, error)
            return False
        return True

    def _loading_failed(self, error: HarnessError) -> NotStarted:
        """Loading failed, or overran the load timeout, with no module named: charged once, to the loading, for the run.

        The next start would load the same modules the same way, so no case pays for it again
        (not the load timeout once per case): the case in flight and every later one are not
        run, with this one reason.
        """
        if isinstance(error, HarnessTimeout):
            what = (
                f"loading the implementation's modules took longer than {self.options.load_timeout_s:g} s, its load timeout "
                "(--load-timeout, apart from every case's timeout)"
            )
        else:
            what = f"loading the implementation's modules failed: {error}"
        # The case in flight was not run either: it and every later case say the same, one cause.
        self._load_failure = f"{what}; {self.name} is not started again in this run"
        return NotStarted(f"not run: {self._load_failure}")

    def _handshake_failed(self, reason: str, timed_out: bool = False) -> NoReturn:
        self._handshake_failures += 1
        self._last_handshake_error = reason
        self._last_handshake_timed_out = timed_out
        raise (HarnessTimeout if timed_out else HarnessError)(f"the handshake failed: {reason}")

    # -- requests ----------------------------------------------------------------------------

    def _load_failed(self, module: str, error: HarnessError) -> HarnessError:
        """Charge a death (or a protocol break) while ``module`` loaded to that module, once for the run.

        Loading a module does the same whichever case asked for it, so every later start of the
        program is told not to load it (``failed_modules``) and answers the cases that need it
        with this message at once, instead of dying again for each of them.
        """
        head, separator, stderr_tail = str(error).partition(STDERR_NOTE)
        summary = f"{head.removesuffix(NO_STDERR_NOTE)} while loading {module}"
        if isinstance(error, HarnessTimeout):  # only a preload times out here: a case's own timeout cancels first
            summary += " (the load timeout, --load-timeout)"
        self._failed_modules[module] = f"{summary} (in an earlier process; the module is not loaded again in this run)"
        return type(error)(f"{summary}{separator}{stderr_tail}")

    def _request(self, operation: str, input: JsonObject, steps: list[JsonObject] | None = None) -> JsonObject:
        with self._lock:
            response = self._send_request(operation, input, steps)
        self.stray_output.note(response.get("stray_output"))
        self._timeouts[operation] = 0
        self._exits[operation] = 0
        return self._observation(response)

    def _send_request(self, operation: str, input: JsonObject, steps: list[JsonObject] | None) -> JsonObject:
        """Send one operation to a live program and read its answer; a failure is counted against the operation."""
        self._ensure_session()
        session = self._session
        assert session is not None
        if call_abandoned():  # given up while the program was starting: nobody reads the answer
            raise HarnessTimeout(f"{operation}: given up before it was sent")
        message: JsonObject = {"seq": self._next_seq(), "op": operation, "input": input}
        if steps is not None:
            # The program never sees the expected values.
            message["steps"] = [{key: value for key, value in step.items() if key != "expect"} for step in steps]
        self._in_flight, self._cancelled = operation, False
        session.loading = None  # only a module this request loads can be charged with its failure
        try:
            return exchange(session, message, _RESPONSE_SAFETY_S, "ObservationResponse", operation, self.name)
        except HarnessError as error:
            session.kill()  # the stream may be out of step: start afresh for the next case
            if self._cancelled:
                raise
            if session.loading is not None:
                raise self._load_failed(session.loading, error) from None
            if isinstance(error, ProgramExited):
                self._exits[operation] += 1
                self._last_exit[operation] = str(error).splitlines()[0]
            raise
        finally:
            self._in_flight = None

    def _observation(self, response: JsonObject) -> JsonObject:
        """The observation of a valid response; an error response raises what it reports."""
        if response.get("ok") is False:
            reported = response["error"]
            assert isinstance(reported, dict)
            kind, text = reported.get("kind"), cap(str(reported.get("message")))
            reported_error = _REPORTED_ERRORS.get(kind) if isinstance(kind, str) else None
            if reported_error is None:
                raise HarnessError(f"{self.name} reported a protocol error: {text}")
            raise reported_error(text)
        observation = response["observation"]
        assert isinstance(observation, dict)
        return observation

    # -- the operations ---------------------------------------------------------------------

    def perform(self, operation: str, input: JsonObject, steps: list[JsonObject] | None = None) -> JsonObject:
        """Any operation of any profile, sent to the program as it is: the program answers what it implements."""
        return self._request(operation, input, (steps or []) if is_scenario(operation) else None)


if sys.platform == "win32":  # pragma: no cover - the course runs on POSIX machines
    raise ImportError("the JSON-lines process transport needs a POSIX system (process groups, rlimits)")
