"""The options every command that runs an implementation shares, declared once.

Each :class:`Option` is declared here with its type (the check), its help and its default;
``run``, ``grade``, ``grade-batch``, ``matrix``, ``check``, ``fuzz`` and ``private-set`` add
it with :meth:`Option.add`, and the pytest plugin with :meth:`Option.add_to_pytest`; no
command declares one of these options itself. An option is spelled the same in both, except
where pytest or a common plugin already owns the name: pytest has a ``--fixtures``, and
pytest-timeout a ``--timeout``, so the plugin spells those two ``--fixtures-dir`` and
``--case-timeout`` (:attr:`Option.plugin_flag`); ``run`` passes the CLI's values on in that
spelling (:meth:`Option.forward`). The resource limits are declared in :mod:`.limit_options`.
A default lives in the module that owns the value (the timeout's in
:data:`conformance.model.cases.DEFAULT_TIMEOUT_S`, the limits' in
:mod:`conformance.isolation.limits`); the help texts quote it from there.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conformance.adapters.kinds import prefixes
from conformance.adapters.settings import ImplSettings
from conformance.commands.checks import positive_number
from conformance.commands.limit_options import add_limit_options, with_limit_options
from conformance.isolation.sandbox import INSTALL_HINT, SANDBOX_MODES
from conformance.model.cases import DEFAULT_TIMEOUT_S

if TYPE_CHECKING:
    import pytest

Parser = argparse.ArgumentParser | argparse._ArgumentGroup
#: The kinds whose programs the sandbox and the limits hold.
PROCESS_KINDS = prefixes(lambda kind: kind.separate_process)


@dataclass(frozen=True)
class Option:
    """One shared option: its flag on the command line, its flag in the pytest plugin, and argparse's keywords."""

    flag: str
    plugin_flag: str
    keywords: dict[str, Any] = field(default_factory=dict)

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    def add(self, parser: Parser, **overrides: Any) -> None:
        """Add it to a command (``overrides``: a command's own help or default, never its type)."""
        parser.add_argument(self.flag, **{**self.keywords, **overrides})

    def add_to_pytest(self, group: pytest.OptionGroup) -> None:
        """Add it to the pytest plugin's options, as :attr:`plugin_flag`, with the same type and default."""
        keywords = {key: value for key, value in self.keywords.items() if key != "metavar"}
        group.addoption(self.plugin_flag, dest=self.plugin_flag.removeprefix("--").replace("-", "_"), **keywords)

    def forward(self, args: argparse.Namespace) -> list[str]:
        """The value ``args`` holds, as pytest plugin arguments (none when it is the default)."""
        value = getattr(args, self.dest)
        if value is None or value == []:
            return []
        values: Sequence[Any] = value if isinstance(value, list) else [value]
        return [part for item in values for part in (self.plugin_flag, str(item))]


FIXTURES = Option("--fixtures", "--fixtures-dir", {"metavar": "DIR", "help": "fixtures folder (default: the bundled fixtures)"})
TIMEOUT = Option(
    "--timeout",
    "--case-timeout",
    {
        "type": positive_number,
        "metavar": "SECONDS",
        "help": f"per-case timeout in seconds (default {DEFAULT_TIMEOUT_S:g}); a case's own timeout_s is a floor: "
        "the larger of the two holds (spec/fixture-format.md, Timeouts)",
    },
)
ENV = Option(
    "--env",
    "--env",
    {"action": "append", "default": [], "metavar": "KEY=VALUE", "help": "add to the program's minimal environment"},
)
SANDBOX = Option(
    "--sandbox",
    "--sandbox",
    {
        "choices": SANDBOX_MODES,
        "default": "auto",
        "help": f"run {PROCESS_KINDS} programs (and builds) under bubblewrap: auto = when it works here, "
        f"else unconfined with a warning (default); bwrap = required; none = unconfined ({INSTALL_HINT})",
    },
)


def add_process_options(parser: Parser) -> None:
    """``--env``, the resource limits and ``--sandbox``: how an implementation's programs are started."""
    ENV.add(parser)
    add_limit_options(parser)
    SANDBOX.add(parser)


def process_settings(args: argparse.Namespace, **more: Any) -> ImplSettings:
    """The settings :func:`add_process_options` gave ``args`` (and ``more``)."""
    settings = ImplSettings(env=parse_env(args.env), sandbox=args.sandbox, **more)
    return with_limit_options(settings, args)


def parse_env(items: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` items as a mapping (an item without ``=`` sets KEY to the empty string)."""
    return dict(item.partition("=")[::2] for item in items)
