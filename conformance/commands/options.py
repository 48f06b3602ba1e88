"""The options every command that runs an implementation shares, declared once.

Each :class:`~conformance.commands.option.Option` is declared here with its type (the check),
its help and its default; ``run``, ``grade``, ``grade-batch``, ``matrix``, ``check``, ``fuzz``
and ``private-set`` add it with :meth:`Option.add`, the pytest plugin with
:meth:`Option.add_to_pytest` (``run``'s whole table is :mod:`.run_options`); no command
declares one of these options itself. An option has one spelling, except where pytest or a
common plugin owns the flag in pytest's own command line (:attr:`Option.pytest_flag`):
pytest's ``--fixtures``, pytest-timeout's ``--timeout``. ``run`` hands its parsed values to
the plugin, never through pytest's command line, so that exception is pytest's alone.
The resource limits are declared in :mod:`.limit_options`. A default lives in the module that
owns the value (the timeout's in :data:`conformance.model.cases.DEFAULT_TIMEOUT_S`, the
limits' in :mod:`conformance.isolation.limits`); the help texts quote it from there.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from conformance.adapters.kinds import prefixes
from conformance.adapters.settings import DEFAULT_LOAD_TIMEOUT_S, ImplSettings
from conformance.commands.checks import positive_number
from conformance.commands.limit_options import LIMIT_OPTIONS, with_limit_options
from conformance.commands.option import Option, Parser
from conformance.isolation.sandbox import INSTALL_HINT, SANDBOX_MODES
from conformance.model.cases import DEFAULT_TIMEOUT_S

__all__ = [
    "ENV",
    "FIXTURES",
    "LOAD_TIMEOUT",
    "PROCESS_OPTIONS",
    "SANDBOX",
    "TIMEOUT",
    "Option",
    "add_process_options",
    "parse_env",
    "process_settings",
]

#: The kinds whose programs the sandbox and the limits hold.
PROCESS_KINDS = prefixes(lambda kind: kind.separate_process)


FIXTURES = Option("--fixtures", {"metavar": "DIR", "help": "fixtures folder (default: the bundled fixtures)"}, pytest_flag="--fixtures-dir")
TIMEOUT = Option(
    "--timeout",
    {
        "type": positive_number,
        "metavar": "SECONDS",
        "help": f"per-case timeout in seconds (default {DEFAULT_TIMEOUT_S:g}); a case's own timeout_s is a floor: "
        "the larger of the two holds (spec/fixture-format.md, Timeouts)",
    },
    pytest_flag="--case-timeout",
)
LOAD_TIMEOUT = Option(
    "--load-timeout",
    {
        "type": positive_number,
        "metavar": "SECONDS",
        "help": f"seconds a program may take to load the implementation's modules, once per start, before any case and "
        f"apart from every case's timeout (default {DEFAULT_LOAD_TIMEOUT_S:g}; spec/protocol.md, preload)",
    },
)
ENV = Option(
    "--env",
    {"action": "append", "default": [], "metavar": "KEY=VALUE", "help": "add to the program's minimal environment"},
)
SANDBOX = Option(
    "--sandbox",
    {
        "choices": SANDBOX_MODES,
        "default": "auto",
        "help": f"run {PROCESS_KINDS} programs (and builds) under bubblewrap: auto = when it works here, "
        f"else unconfined with a warning (default); bwrap = required; none = unconfined ({INSTALL_HINT})",
    },
)


#: ``--env``, the resource limits, ``--load-timeout`` and ``--sandbox``: how an implementation's programs are started.
PROCESS_OPTIONS: tuple[Option, ...] = (ENV, *LIMIT_OPTIONS, LOAD_TIMEOUT, SANDBOX)


def add_process_options(parser: Parser) -> None:
    """Add :data:`PROCESS_OPTIONS`."""
    for option in PROCESS_OPTIONS:
        option.add(parser)


def process_settings(args: argparse.Namespace, **more: Any) -> ImplSettings:
    """The settings :func:`add_process_options` gave ``args`` (and ``more``)."""
    settings = ImplSettings(env=parse_env(args.env), sandbox=args.sandbox, load_timeout_s=args.load_timeout, **more)
    return with_limit_options(settings, args)


def parse_env(items: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` items as a mapping (an item without ``=`` sets KEY to the empty string)."""
    return dict(item.partition("=")[::2] for item in items)
