"""One command-line option, declared once for argparse and for the pytest plugin alike (:class:`Option`)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

Parser = argparse.ArgumentParser | argparse._ArgumentGroup


@dataclass(frozen=True)
class Option:
    """An option: its flag, argparse's keywords (type, default, help), and where pytest needs another flag.

    The same keywords serve argparse and pytest (whose ``addoption`` takes argparse's), and
    both store the value under :attr:`dest`: a namespace of either reads the same.
    """

    flag: str
    keywords: dict[str, Any] = field(default_factory=dict)
    #: The flag in the pytest plugin when pytest or a common plugin owns :attr:`flag` already (pytest's
    #: ``--fixtures``, pytest-timeout's ``--timeout``): pytest refuses a second declaration of a flag.
    pytest_flag: str | None = None

    @property
    def dest(self) -> str:
        """The attribute the value is stored under, in argparse's namespace and in pytest's options."""
        return str(self.keywords.get("dest") or self.flag.removeprefix("--").replace("-", "_"))

    @property
    def default(self) -> Any:
        """Its value when not given (argparse's: False for a flag that stores True, None when no default is declared)."""
        if "default" in self.keywords:
            return self.keywords["default"]
        return {"store_true": False, "store_false": True}.get(self.keywords.get("action", ""))

    def add(self, parser: Parser, **overrides: Any) -> None:
        """Add it to a command (``overrides``: a command's own help or default, never its type)."""
        parser.add_argument(self.flag, **{**self.keywords, **overrides})

    def add_to_pytest(self, group: pytest.OptionGroup) -> None:
        """Add it to the pytest plugin's options, with the same type, default and help, under the same :attr:`dest`."""
        keywords = {key: value for key, value in self.keywords.items() if key not in ("metavar", "dest", "default")}
        group.addoption(self.pytest_flag or self.flag, dest=self.dest, default=self.default, **keywords)
