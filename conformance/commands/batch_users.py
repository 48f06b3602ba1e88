"""``grade-batch --run-as-range START-END``: without a sandbox, each submission graded at once runs as a uid of its own.

Without bubblewrap (``--sandbox none``, or ``auto`` where it does not work) every build and
adapter of a batch ran as one user: one submission's build script killed its classmates'
adapters, rewrote their built copies through ``/proc`` and read their reports (issue 32). A
user can only signal, trace or open the files of its own processes, so concurrent jobs get
distinct uids from a range staff set aside (uids no one else uses; they need no account), and
each job's files (its build copy, its temporary folder) belong to its uid alone, mode 0700.
``--jobs`` above 1 with neither a sandbox nor such a range is refused with the reason.
"""

from __future__ import annotations

import argparse

from conformance.adapters.kinds import Impl
from conformance.adapters.settings import ImplSettings
from conformance.commands.checks import positive_integer
from conformance.isolation.run_as import RunAsError, run_as_problem


class UidRangeError(RunAsError):
    """``--run-as-range`` is not a usable range (one line)."""


def add_jobs_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--jobs N`` and ``--run-as-range START-END`` (grade-batch)."""
    parser.add_argument("--jobs", "-j", type=positive_integer, default=1, metavar="N", help="grade up to N submissions at once (default 1)")
    parser.add_argument(
        "--run-as-range",
        metavar="START-END",
        help="without a sandbox: run each submission graded at once as its own unprivileged uid from START..END "
        "(uids no one else uses; as many as --jobs at least; the grader must be root)",
    )


def parse_uid_range(text: str) -> tuple[int, ...]:
    """``START-END`` (inclusive) as the uids it holds; :class:`UidRangeError` unless 0 < START <= END."""
    start, separator, end = text.partition("-")
    if not separator or not start.isdigit() or not end.isdigit():
        raise UidRangeError(f"--run-as-range {text}: give START-END, two uids (e.g. 60000-60015)")
    first, last = int(start), int(end)
    if first == 0 or first > last:
        raise UidRangeError(f"--run-as-range {text}: START must be above 0 (root) and at most END")
    return tuple(range(first, last + 1))


def classmates_problem(jobs: int, template: Impl, settings: ImplSettings, uids: tuple[int, ...], run_as: str | None) -> str | None:
    """Why a batch of ``jobs`` at once would let one submission reach another's processes and files, or None."""
    if uids and run_as:
        return "--run-as and --run-as-range exclude each other: the range gives each job its own user"
    if uids and len(uids) < jobs:
        return f"--run-as-range holds {len(uids)} uid(s) for --jobs {jobs}: give at least one per job"
    if jobs <= 1 or uids or template.planned_isolation(settings) != "none":
        return None
    who = f"one user (uid {run_as})" if run_as else "the grader's own user"
    return (
        f"--jobs {jobs} without a sandbox runs every submission as {who}, so one submission's build can kill "
        "its classmates, rewrite their built copies and read their reports: give --run-as-range START-END "
        "(a uid per job), install bubblewrap, or grade with --jobs 1"
    )


def batch_uids(args: argparse.Namespace, settings: ImplSettings) -> tuple[int, ...]:
    """The uids of ``--run-as-range`` (none when not given), checked against ``--jobs``, the sandbox and what they must read.

    :class:`UidRangeError` (a :class:`RunAsError`) when the batch must not run as asked.
    """
    uids = parse_uid_range(args.run_as_range) if args.run_as_range else ()
    problem = classmates_problem(args.jobs, args.impl_template, settings, uids, args.run_as)
    if problem is None and uids:
        # Every uid of the range is a stranger to the files alike: what the first can read, all can.
        problem = run_as_problem((uids[0], uids[0]), args.impl_template.process_needs(args.build))
    if problem:
        raise UidRangeError(problem)
    return uids
