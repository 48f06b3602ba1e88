"""The Node.js versions pi-conformance supports, each number said once (docs/node-versions.md tells the story).

- :data:`MINIMUM_MAJOR` (20): the oldest Node.js a ``pi-course:`` build or adapter runs on, with
  the permission model that confines student code (``--experimental-permission`` there). Older
  ones are refused with a message naming the version found: they lack it.
- :data:`COURSE_FLOOR` (22.19): what the course itself declares (its monorepo's ``engines.node``),
  and the first release of the 22 line the adapters confine (``--permission``): 21.x and
  22.0-22.18 are refused like 18. Node 20 grades, but ``doctor`` says a student project may use
  APIs of 22.19+. :mod:`conformance.adapters.node_runtime` spells the flags of each.
- :data:`INSTALL_MAJOR` (22): the release line Gradescope's ``setup.sh`` installs and the GitHub
  Classroom workflow asks ``actions/setup-node`` for, and the major of ``@types/node`` in the
  toolchain lock (:data:`TYPES_NODE_MAJOR`), as the course's own ``@types/node`` is 22.
"""

from __future__ import annotations

import re

MINIMUM_MAJOR = 20
COURSE_FLOOR = (22, 19)
INSTALL_MAJOR = 22
TYPES_NODE_MAJOR = INSTALL_MAJOR


def floor_text() -> str:
    """The course's floor as people write it: ``22.19``."""
    return ".".join(str(part) for part in COURSE_FLOOR)


def parse(version: str) -> tuple[int, int] | None:
    """``v22.19.0`` -> ``(22, 19)``; None when it is no Node.js version."""
    match = re.match(r"v?(\d+)\.(\d+)", version.strip())
    return (int(match[1]), int(match[2])) if match else None


def supported(version: str) -> bool:
    """True when this Node.js runs pi-course builds and adapters: 20.x (:data:`MINIMUM_MAJOR`) or 22.19+ (:data:`COURSE_FLOOR`)."""
    found = parse(version)
    return found is not None and (found[0] == MINIMUM_MAJOR or found >= COURSE_FLOOR)


def below_course_floor(version: str) -> bool:
    """True for a supported Node.js older than the course's declared floor (grades, with a note)."""
    found = parse(version)
    return found is not None and supported(version) and found < COURSE_FLOOR


def supported_text() -> str:
    """The supported versions as messages and docs name them: ``Node.js 20.x or 22.19+``."""
    return f"Node.js {MINIMUM_MAJOR}.x or {floor_text()}+"
