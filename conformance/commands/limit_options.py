"""The resource-limit options shared by ``grade``, ``grade-batch`` and ``run``.

Each limit is on by default (see :mod:`conformance.isolation.limits`); an option changes one,
``--no-limits`` drops the defaults (the limits given explicitly still hold).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from conformance.adapters.settings import ImplSettings
from conformance.commands.checks import positive_integer
from conformance.isolation import limits

if TYPE_CHECKING:
    import pytest


#: Each limit option's flag and argparse keywords: one declaration for the CLI and the pytest plugin.
LIMIT_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "--cpu-limit",
        {
            "type": positive_integer,
            "metavar": "SECONDS",
            "help": f"CPU seconds of each process of the program and of its build (default {limits.DEFAULT_CPU_S}; "
            f"build {limits.DEFAULT_BUILD_CPU_S})",
        },
    ),
    (
        "--memory-limit",
        {
            "type": positive_integer,
            "metavar": "MIB",
            "help": f"memory of the program in total, its /tmp included, where a cgroup can be made; else the address space "
            f"of each process (default {limits.DEFAULT_MEMORY_MB})",
        },
    ),
    (
        "--pids-limit",
        {"type": positive_integer, "metavar": "N", "help": f"processes and threads of the program at once (default {limits.DEFAULT_PIDS})"},
    ),
    (
        "--tmp-size",
        {"type": positive_integer, "metavar": "MIB", "help": f"size of the sandbox's private /tmp (default {limits.DEFAULT_TMP_MB})"},
    ),
    (
        "--no-limits",
        {
            "dest": "limits",
            "action": "store_false",
            "help": "no default resource limit (memory, processes, CPU, /tmp, file size); the ones given above still hold",
        },
    ),
)


def add_limit_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--cpu-limit``, ``--memory-limit``, ``--pids-limit``, ``--tmp-size`` and ``--no-limits``."""
    for flag, keywords in LIMIT_OPTIONS:
        parser.add_argument(flag, **keywords)


def add_limit_options_to_pytest(group: pytest.OptionGroup) -> None:
    """The same options, for the pytest plugin (which ``run`` passes them on to)."""
    for flag, keywords in LIMIT_OPTIONS:
        group.addoption(flag, **{key: value for key, value in keywords.items() if key != "metavar"})


def with_limit_options(settings: ImplSettings, args: argparse.Namespace) -> ImplSettings:
    """``settings`` with the limits the options set."""
    return replace(
        settings,
        cpu_limit_s=args.cpu_limit,
        memory_limit_mb=args.memory_limit,
        pids_limit=args.pids_limit,
        tmp_size_mb=args.tmp_size,
        limits=args.limits,
    )


def limit_arguments(args: argparse.Namespace) -> list[str]:
    """The same options again, for a command line that passes them on (``run`` to pytest)."""
    argv: list[str] = []
    for option, value in (
        ("--cpu-limit", args.cpu_limit),
        ("--memory-limit", args.memory_limit),
        ("--pids-limit", args.pids_limit),
        ("--tmp-size", args.tmp_size),
    ):
        if value is not None:
            argv += [option, str(value)]
    if not args.limits:
        argv.append("--no-limits")
    return argv
