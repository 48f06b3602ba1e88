"""The resource-limit options shared by ``grade``, ``grade-batch`` and ``run``.

Each limit is on by default (see :mod:`conformance.isolation.limits`); an option changes one,
``--no-limits`` drops the defaults (the limits given explicitly still hold).
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from conformance.adapters.settings import ImplSettings
from conformance.commands.checks import positive_integer
from conformance.commands.option import Option, Parser
from conformance.isolation import limits

#: The limit options: one declaration for the CLI and the pytest plugin.
LIMIT_OPTIONS: tuple[Option, ...] = (
    Option(
        "--cpu-limit",
        {
            "type": positive_integer,
            "metavar": "SECONDS",
            "help": f"CPU seconds of each process of the program and of its build (default {limits.DEFAULT_CPU_S}; "
            f"build {limits.DEFAULT_BUILD_CPU_S})",
        },
    ),
    Option(
        "--memory-limit",
        {
            "type": positive_integer,
            "metavar": "MIB",
            "help": f"memory of the program in total, its /tmp included, where a cgroup can be made; else the address space "
            f"of each process (default {limits.DEFAULT_MEMORY_MB})",
        },
    ),
    Option(
        "--pids-limit",
        {"type": positive_integer, "metavar": "N", "help": f"processes and threads of the program at once (default {limits.DEFAULT_PIDS})"},
    ),
    Option(
        "--tmp-size",
        {"type": positive_integer, "metavar": "MIB", "help": f"size of the sandbox's private /tmp (default {limits.DEFAULT_TMP_MB})"},
    ),
    Option(
        "--no-limits",
        {
            "dest": "limits",
            "action": "store_false",
            "help": "no default resource limit (memory, processes, CPU, /tmp, file size); the ones given above still hold",
        },
    ),
)


def add_limit_options(parser: Parser) -> None:
    """Add ``--cpu-limit``, ``--memory-limit``, ``--pids-limit``, ``--tmp-size`` and ``--no-limits``."""
    for option in LIMIT_OPTIONS:
        option.add(parser)


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
