"""Which Node.js versions the adapters run on, and the permission-model flags each one spells its own way.

The course and pi-ai adapters run student (or third-party) code in their own process, so that
process runs under Node.js's permission model (docs/isolation.md): no inspector, no child
processes, no worker threads, no native addons, no WASI, no file writes, and file reads only
below the folders :func:`isolation_flags` is given. This module is the one place that knows how
each Node.js version spells that:

- Node.js 20.x: ``--experimental-permission`` (the model is experimental there);
- Node.js 22.19 and later (22.x, 24.x, ...): ``--permission`` (22.19 is the course's declared floor;
  the flag exists from 22.13, but the course asks for 22.19, and 21.x and 22.0-22.18 are not supported).

Both take ``--allow-fs-read=PATH`` once per path (a comma-separated list is refused since 20.7).
No ``--allow-*`` flag that grants more is ever passed (``--allow-fs-write``,
``--allow-child-process``, ``--allow-worker``, ``--allow-addons``, ``--allow-wasi``, and 24's
``--allow-inspector``): each is denied by the model's default. ``--frozen-intrinsics`` (20, 22, 24)
freezes the built-in prototypes and constructors before any module runs, so the adapter's
observing code cannot be rewritten through them either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from conformance.toolchain import node_versions

#: The versions the adapters run on, as messages and docs name them.
SUPPORTED_NODE = node_versions.supported_text()
#: The oldest release line with a permission model the adapters use.
OLDEST_MAJOR = node_versions.MINIMUM_MAJOR
#: From this (major, minor) on, the model is switched on by ``--permission``.
STABLE_PERMISSION = node_versions.COURSE_FLOOR

NodeVersion = tuple[int, int, int]


class UnsupportedNode(ValueError):
    """The Node.js found is not one the adapters can confine (see :data:`SUPPORTED_NODE`)."""


def parse_version(text: str) -> NodeVersion | None:
    """``v22.19.0`` (what ``node --version`` prints) as (22, 19, 0); None when it is not a version."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)\S*", text.strip())
    return None if match is None else (int(match[1]), int(match[2]), int(match[3]))


def permission_switch(version: NodeVersion) -> str | None:
    """The flag that turns the permission model on for ``version``; None when it is not supported."""
    if version[0] == OLDEST_MAJOR:
        return "--experimental-permission"
    if version[:2] >= STABLE_PERMISSION:
        return "--permission"
    return None


def check_supported(version_text: str, who: str) -> NodeVersion:
    """The version, if the adapters can confine it; else :class:`UnsupportedNode` with one line that says why."""
    version = parse_version(version_text)
    if version is None or permission_switch(version) is None:
        found = version_text.strip() or "an unknown version"
        raise UnsupportedNode(
            f"{who}: needs {SUPPORTED_NODE} (their permission model keeps student code away from the grader's seal), found {found}"
        )
    return version


def isolation_flags(version: NodeVersion, readable: Sequence[Path]) -> list[str]:
    """The flags that confine an adapter on Node.js ``version``: the model on, reads below ``readable`` only."""
    switch = permission_switch(version)
    if switch is None:
        raise UnsupportedNode(f"Node.js {'.'.join(map(str, version))} has no permission model the adapters use ({SUPPORTED_NODE})")
    reads = [f"--allow-fs-read={path}" for path in dict.fromkeys(str(path) for path in readable)]
    # The model's and the frozen intrinsics' "experimental" warnings would only crowd the stderr tail
    # that failure messages quote.
    return [switch, *reads, "--frozen-intrinsics", "--disable-warning=ExperimentalWarning"]
