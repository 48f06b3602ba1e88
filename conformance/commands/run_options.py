"""``run``'s options, declared once: the table both ``run`` (argparse) and the pytest plugin add.

``run`` parses its command line with these declarations and hands the values to the plugin
(:func:`run_values`), which reads them by :attr:`~conformance.commands.option.Option.dest`, the
same names as when pytest parsed them itself (``pytest conformance/suite --impl ...``). So each
option has one type, one default and one help; ``run`` does not write a pytest command line.
The few options only ``run`` has (``-k``, ``-v``, ``--html``) are pytest's own or are done after
pytest returns, and are declared by ``run`` alone.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from conformance.adapters.kinds import BUILT_KINDS, COURSE_CODE_KINDS, KINDS, PROCESS_GROUP, bundled_impl, parse_impl
from conformance.commands.option import Option
from conformance.commands.options import FIXTURES, PROCESS_OPTIONS, TIMEOUT
from conformance.loading.selection import CHAPTERS
from conformance.model.cases import LABS
from conformance.model.profiles import DEFAULT_PROFILE, PROFILES, profiles_in_words

if TYPE_CHECKING:
    import pytest


def references_of(profile: str) -> str:
    """How the kinds that can be ``profile``'s reference are written (``pi-ai:PATH`` for pi-ai-1)."""
    return ", ".join(kind.usage for kind in KINDS if kind.reference_of == profile)


#: The profiles whose reference is a published package, each with how it is given (``pi-ai-1: pi-ai:PATH``).
_PUBLISHED_REFERENCES: Final = ", ".join(f"{name}: {references_of(name)}" for name, p in PROFILES.items() if p.reference_package)


#: ``--impl`` when none is given: the course's bundled reference.
REFERENCE: Final = bundled_impl(DEFAULT_PROFILE)

IMPL = Option(
    "--impl",
    {
        "type": parse_impl,
        "default": REFERENCE,
        "help": f"the implementation under test (default: {REFERENCE})",
    },
)
PROFILE = Option(
    "--profile",
    {
        "default": DEFAULT_PROFILE,
        "help": f"the profile to check: {profiles_in_words()}",
    },
)
LAB = Option(
    "--lab",
    {
        "action": "append",
        "default": [],
        "help": f"run only this lab ({', '.join(LABS)}; with a profile grouped by area: this area); repeatable",
    },
)
CHAPTER = Option("--chapter", {"action": "append", "default": [], "help": f"run only this chapter ({', '.join(CHAPTERS)}); repeatable"})
CLAUSE = Option("--clause", {"action": "append", "default": [], "help": "run only cases checking this clause; repeatable"})
REPORT_JSON = Option("--report-json", {"metavar": "FILE", "help": "write a JSON report to this file"})
ALL_DIVERGENCES = Option(
    "--all-divergences", {"action": "store_true", "help": "list every divergence of a failing case, not only the first"}
)
WITHOUT_FEATURE = Option(
    "--without-feature",
    {
        "action": "append",
        "default": [],
        "metavar": "NAME",
        "help": "do not claim this feature (spec/features.yaml): its cases are skipped, counted as 'not claimed'; repeatable",
    },
)
COURSE_HINTS = Option(
    "--course-hints", {"action": "store_true", "help": f"show hints about the course's TypeScript code ({COURSE_CODE_KINDS} always does)"}
)
BASELINE = Option(
    "--baseline",
    {"metavar": "FILE", "help": "known failures (YAML/JSON, case id -> reason); exit 1 on an unexpected failure or a stale entry"},
)
WRITE_BASELINE = Option(
    "--write-baseline", {"metavar": "FILE", "help": "write the cases that did not pass as a baseline (reasons kept from --baseline)"}
)
ALONGSIDE = Option(
    "--reference",
    {
        "type": parse_impl,
        "metavar": "IMPL",
        "dest": "reference_alongside",
        "help": f"the profile's reference ({_PUBLISHED_REFERENCES}: upstream at the profile's version), "
        "run alongside on each case the implementation fails: a case it fails too is marked [check the case] "
        "(default: the bundled reference when the profile has one, as the course does; else none, and no case is so marked)",
    },
)
BUILD = Option(
    "--build",
    {
        "action": "store_true",
        "help": f"{BUILT_KINDS} build the project first (the course's package.json and tsconfig.json pinned, the pinned tsc; offline)",
    },
)

#: What runs and what a failure shows, in the order ``run --help`` lists them.
SELECTION: Final = (IMPL, PROFILE, LAB, CHAPTER, CLAUSE, FIXTURES, TIMEOUT, REPORT_JSON, ALL_DIVERGENCES, WITHOUT_FEATURE, COURSE_HINTS)
#: Who says a failing case may be wrong itself.
SUSPICION: Final = (ALONGSIDE,)
#: The baseline, then how the implementation's programs are started (the help's process group).
BASELINES: Final = (BASELINE, WRITE_BASELINE)
PROCESS: Final = (*PROCESS_OPTIONS, BUILD)
#: Every option ``run`` hands to the plugin.
RUN_OPTIONS: Final = (*SELECTION, *SUSPICION, *BASELINES, *PROCESS)


def add_run_options(parser: argparse.ArgumentParser, own: Callable[[argparse.ArgumentParser], None]) -> None:
    """The table, as ``run``'s arguments, with ``run``'s ``own`` after ``--impl`` and ``--profile``; the process options in their group."""
    IMPL.add(parser)
    PROFILE.add(parser)
    own(parser)
    for option in (*SELECTION, *SUSPICION, *BASELINES):
        if option not in (IMPL, PROFILE):
            option.add(parser)
    process = parser.add_argument_group(PROCESS_GROUP)
    for option in PROCESS:
        option.add(process)


def add_run_options_to_pytest(group: pytest.OptionGroup) -> None:
    """The same table, as the pytest plugin's options."""
    for option in RUN_OPTIONS:
        option.add_to_pytest(group)


def run_values(args: argparse.Namespace | Mapping[str, Any]) -> dict[str, Any]:
    """The table's values, by dest, from ``run``'s namespace or from what pytest parsed."""
    values = vars(args) if isinstance(args, argparse.Namespace) else args
    return {option.dest: values[option.dest] for option in RUN_OPTIONS}
