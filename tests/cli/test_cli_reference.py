"""The manual's CLI reference (docs/cli.md) is what the parser defines: it cannot drift."""

from __future__ import annotations

import argparse

from conformance import cli_reference
from conformance.cli import build_parser
from tests.support.paths import REPO

PAGE = REPO / "docs" / "cli.md"
REGENERATE = "python -m conformance.cli_reference > docs/cli.md"


def test_the_committed_page_is_what_the_generator_prints() -> None:
    assert PAGE.read_text(encoding="utf-8") == cli_reference.render(), f"docs/cli.md is stale: run `{REGENERATE}` and commit it"


def _every_option(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """``(prog, option string)`` of every documented option of ``parser`` and its subcommands."""
    found: list[tuple[str, str]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _every_option(sub)
        elif action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction):
            found += [(parser.prog, option) for option in action.option_strings]
    return found


def test_every_option_of_every_command_is_on_the_page() -> None:
    page = cli_reference.render()
    # Each heading is one command's prog; its section runs to the next heading.
    sections = {section.split("\n", 1)[0].strip("# `"): section for section in page.split("\n#")}
    sections["pi-conformance"] = page.split("\n#", 1)[0]
    options = _every_option(build_parser())
    assert len(options) > 100, "the parser lost its subcommands"
    missing = [(prog, option) for prog, option in options if f"`{option}" not in sections.get(prog, "")]
    assert missing == [], "options the page does not list under their command's heading"
