"""What happened to a submission as a whole: one word for the gradebook, one line of detail.

``ok`` means the submission was graded normally, whatever its score. Anything else asks
staff to look: it did not build, could not be started, hung, crashed, or had nothing to
grade. Points are still given for what passed (a submission that crashes in lab 4.2 keeps
its lab 3.1 points), except when the build failed or the implementation could not start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from conformance.judging.outcome import Outcome
from conformance.running import engine

SubmissionStatus = Literal["ok", "build-failed", "not-a-project", "invalid", "timed-out", "hung", "crashed", "no-cases"]

#: Statuses of a submission whose cases never ran: reports list no case feedback for them.
NOT_STARTED: Final = frozenset({"build-failed", "not-a-project", "invalid"})

#: Prefix of the message of a case the grader did not run (budget used up, build failed): the engine's.
NOT_RUN: Final = engine.NOT_RUN
_DETAIL_LIMIT = 200


def classify(
    outcomes: Sequence[Outcome], *, budget_exhausted: bool = False, silent: Sequence[Outcome] = ()
) -> tuple[SubmissionStatus, str]:
    """The status of a submission whose implementation started, from its case outcomes.

    ``silent`` are the outcomes of cases that would wait forever: a stream never emitted
    anything (a consumer waits on), or an operation was still pending when the
    implementation's event loop went idle (nothing could ever finish it). The submission is
    ``hung`` although each such case ended early. Precedence: a timeout (the budget ran out, or a case timed out) before
    a hang, before a crash (a case errored: the process died or broke the protocol), before
    nothing graded (every case skipped), before ``ok``.
    """
    hung = [o for o in outcomes if o.timed_out]
    if budget_exhausted:
        return "timed-out", _detail(
            "the submission used up its time budget", hung or [o for o in outcomes if o.message.startswith(NOT_RUN)]
        )
    if hung:
        return "timed-out", _detail(f"{_count(hung)} hung (timed out, or not tried again after timeouts)", hung)
    if silent:
        return "hung", _detail(f"{_count(silent)} would wait forever (a stream that never emits, a promise that never settles)", silent)
    crashed = [o for o in outcomes if o.status == "errored"]
    if crashed:
        return "crashed", _detail(f"{_count(crashed)} errored", crashed)
    if not outcomes or all(o.status == "skipped" for o in outcomes):
        return "no-cases", _detail("nothing to grade: every case was skipped", list(outcomes)) if outcomes else "no case selected"
    return "ok", ""


def _count(outcomes: Sequence[Outcome]) -> str:
    return f"{len(outcomes)} case{'s' if len(outcomes) != 1 else ''}"


def _detail(summary: str, examples: Sequence[Outcome]) -> str:
    if not examples:
        return summary
    first = examples[0]
    message = " ".join(first.message.split())
    text = f"{summary}; first: {first.case_id}: {message}"
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"
