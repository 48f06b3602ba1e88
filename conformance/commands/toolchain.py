"""``pi-conformance toolchain install|status``: the pinned compiler set that builds student projects."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance import toolchain
from conformance.adapters.kinds import BUILT_KINDS


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``toolchain`` with its ``install`` and ``status`` actions to the command line."""
    parser = commands.add_parser(
        "toolchain",
        help=f"install or report the pinned TypeScript toolchain that builds {BUILT_KINDS} projects",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"Where: ${toolchain.ENV_VAR} when set, else $XDG_CACHE_HOME/pi-conformance/toolchain/<lock id> (~/.cache by default).\n"
        "install needs npm and the npm registry; grading never fetches anything.\n"
        "exit status: 0 installed, 1 not installed (status) or the install failed",
    )
    parser.add_argument("action", choices=("install", "status"), help="install: npm ci from the shipped lock; status: what is installed")
    parser.add_argument("--dir", metavar="DIR", help=f"install into / look in DIR instead (as ${toolchain.ENV_VAR} does)")
    parser.set_defaults(handler=toolchain_command)


def toolchain_command(args: argparse.Namespace) -> int:
    """Install or report the toolchain."""
    where = Path(args.dir).expanduser().resolve() if args.dir else None
    if args.action == "install":
        try:
            found = toolchain.install(where)
        except (toolchain.ToolchainMissing, OSError) as error:
            print(f"pi-conformance toolchain: {error}", file=sys.stderr)
            return 1
    else:
        found = toolchain.status(where)
    print(describe(found))
    return 0 if found.installed else 1


def describe(found: toolchain.ToolchainStatus) -> str:
    """The status as the command prints it: where, and each package's version (or the fix)."""
    pinned = ", ".join(f"{name} {version}" for name, version in toolchain.locked_versions().items())
    if found.problem is not None:
        return f"toolchain: not ready: {found.problem}\n  pinned:    {pinned}"
    installed = ", ".join(f"{name} {version}" for name, version in found.versions.items())
    return f"toolchain: {found.folder}\n  installed: {installed}\n  pinned:    {pinned}"
