"""Calling a Python port, and how a port says an input is out of its reach (docs/porting.md, section 2).

A port whose types cannot hold an input (a system-role message, ``stopReason: "pending"``) is
not wrong on that case: it has no case there. It says so by raising :class:`InputNotHeld` (or
any ``NotImplementedError``) from its binding's ``to_impl`` or from the function itself; the
case is then *skipped* with its reason. When a whole class of inputs is out of reach, the
port opts out of the class's feature instead (conformance/model/input_features.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from conformance.adapters.interface import ImplementationThrew, OperationNotSupported
from conformance.adapters.stream_observer import describe_exception

T = TypeVar("T")


class InputNotHeld(NotImplementedError):
    """Raised by a binding (its ``to_impl``, or one of its functions) for an input its types cannot hold: the case is skipped.

    ``raise InputNotHeld("my messages have no system role")``. A plain ``NotImplementedError``
    skips the case too; this one says why in the skip's words ("cannot hold this input").
    """


def not_supported(name: str, error: NotImplementedError) -> OperationNotSupported:
    """The skip for a ``NotImplementedError`` that ``name`` raised: an input it cannot hold, or a part not written yet."""
    if isinstance(error, InputNotHeld):
        return OperationNotSupported(f"{name} cannot hold this input: {error}")
    return OperationNotSupported(f"{name} is not implemented: {error}")


def call_port(function: Callable[..., T], name: str, *args: Any, **kwargs: Any) -> T:
    """Call the port: ``NotImplementedError`` skips the case, any other exception fails it."""
    try:
        return function(*args, **kwargs)
    except NotImplementedError as error:
        raise not_supported(name, error) from error
    except Exception as error:
        raise ImplementationThrew(f"{name}() threw {describe_exception(error)}") from error


@dataclass
class Refusals:
    """The first input ``to_impl`` refused during one operation, kept whatever the port's code did with the exception.

    ``to_impl`` also runs where the port calls the runner back (a scripted tool's ``execute``, a
    scripted model's turn, a faux response): a port that catches the exception there would turn
    a refused input into a failure or an error that is not its bug. The operation is skipped
    all the same, with the refusal's reason.
    """

    refused: OperationNotSupported | None = None

    def refuse(self, reason: str) -> OperationNotSupported:
        """The skip for a refused input, remembered (the first one) until the operation ends."""
        error = OperationNotSupported(reason)
        if self.refused is None:
            self.refused = error
        return error

    def guard(self, operation: Callable[[], T]) -> T:
        """Run one operation; a refusal made meanwhile skips it, whatever it returned or raised."""
        self.refused = None
        try:
            result = operation()
        except Exception:
            if self.refused is not None:
                raise self.refused from None
            raise
        if self.refused is not None:
            raise self.refused
        return result
