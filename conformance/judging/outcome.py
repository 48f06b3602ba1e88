"""What happened to one case, and where an observation first differs from its expectation.

The one model of a verdict that every stage after running shares: the engine and the pytest
front end produce :class:`Outcome` values, judging explains them, grading scores them and the
reports render them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final, Literal, get_args

from conformance.common.jsontypes import JsonObject, JsonValue

#: The kinds of divergence: a key or item the observation lacks, one it has beyond the
#: expectation, a value of another JSON type, another value of the same type.
KINDS: Final = ("missing", "unexpected", "type", "value")


@dataclass(frozen=True)
class Divergence:
    """The first place where an observation differs from the expectation."""

    path: str
    expected: str
    actual: str
    note: str = ""
    #: What kind of difference: :data:`KINDS` (``missing``, ``unexpected``, ``type``, ``value``).
    kind: str = "value"
    #: For an unexpected key (reported at its parent), that key; else "".
    key: str = ""

    def __str__(self) -> str:
        where = self.path or "(root)"
        text = f"{where}: expected {self.expected} but got {self.actual}"
        return f"{text} ({self.note})" if self.note else text

    def to_json(self) -> JsonObject:
        """Its JSON form, the one every report and the grading farm write (:meth:`from_json` reads it back)."""
        return {field: getattr(self, field) for field in _DIVERGENCE_FIELDS}

    @classmethod
    def from_json(cls, data: object) -> Divergence:
        """A divergence read back from :meth:`to_json`'s form; :class:`ValueError` when it is not one.

        The JSON may come from a grading worker that ran student code: every field is checked.
        """
        if not isinstance(data, dict) or not all(isinstance(value, str) for value in data.values()):
            raise ValueError("a divergence is an object of strings")
        unknown = sorted(set(data) - set(_DIVERGENCE_FIELDS))
        missing = [field for field in _REQUIRED_FIELDS if field not in data]
        if unknown or missing:
            raise ValueError(f"a divergence with unknown fields {unknown} or without {missing}")
        if data.get("kind", "value") not in KINDS:
            raise ValueError(f"a divergence of unknown kind {data['kind']!r}")
        return cls(**data)


_DIVERGENCE_FIELDS: Final = ("path", "expected", "actual", "note", "kind", "key")
_REQUIRED_FIELDS: Final = ("path", "expected", "actual")


Status = Literal["passed", "failed", "errored", "skipped"]
#: Every status, in the order reports list them.
STATUSES: Final[tuple[Status, ...]] = get_args(Status)


@dataclass(frozen=True)
class Outcome:
    """What happened to one case."""

    case_id: str
    status: Status
    message: str
    duration_s: float
    divergence: Divergence | None = None
    step_index: int | None = None
    observation: JsonObject | None = None
    #: The implementation hung: the case or its handshake timed out, or was given up after timeouts.
    timed_out: bool = False
    #: The case was not tried: the adapter gave up on its operation after repeated timeouts or exits.
    given_up: bool = False
    #: The operation can never finish: it was pending while the implementation's event loop was idle.
    hung: bool = False

    def to_json(self) -> dict[str, JsonValue]:
        """Its JSON form (what :meth:`from_json` reads back): how a grading worker hands it to the batch.

        The observation is shared, not copied (``dataclasses.asdict`` deep-copies it): the
        result is for serialising, and copying every observation was most of its cost.
        """
        data: dict[str, JsonValue] = {name: getattr(self, name) for name in _OUTCOME_FIELDS}
        data["divergence"] = self.divergence.to_json() if self.divergence is not None else None
        return data

    @classmethod
    def from_json(cls, data: object) -> Outcome:
        """An outcome read back from :meth:`to_json`'s form; :class:`OutcomeFormatError` when it is not one.

        The JSON comes from a process that ran student code: a malformed one costs its own
        case (or submission), never the batch, so every type the reports rely on is checked.
        Unknown keys are ignored; the flags default to false.
        """
        if not (isinstance(data, dict) and data.get("status") in get_args(Status)):
            raise OutcomeFormatError("an outcome without a known status")
        values = {key: value for key, value in data.items() if key in _OUTCOME_FIELDS}
        _require(isinstance(values.get("case_id"), str) and isinstance(values.get("message"), str), "an outcome without id or message")
        duration = values.get("duration_s")
        _require(isinstance(duration, int | float) and not isinstance(duration, bool), "an outcome without a duration")
        _require(values.get("observation") is None or isinstance(values["observation"], dict), "an observation that is not an object")
        _require(values.get("step_index") is None or type(values["step_index"]) is int, "a step index that is not a number")
        try:
            values["divergence"] = Divergence.from_json(values["divergence"]) if values.get("divergence") is not None else None
        except ValueError as error:
            raise OutcomeFormatError(f"a bad divergence ({error})") from error
        for flag in ("timed_out", "given_up", "hung"):
            values[flag] = bool(values.get(flag, False))
        return cls(**values)


class OutcomeFormatError(ValueError):
    """JSON that is not an :class:`Outcome` (:meth:`Outcome.from_json`)."""


def _require(condition: bool, problem: str) -> None:
    # Not assert: the check must survive python -O.
    if not condition:
        raise OutcomeFormatError(problem)


_OUTCOME_FIELDS: Final = tuple(field.name for field in dataclasses.fields(Outcome))
