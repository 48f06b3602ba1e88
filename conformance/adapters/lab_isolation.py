"""Which labs the course adapter runs over the reference of earlier chapters' modules (lab isolation).

``node/isolation.json`` is the one table, read by the Node.js adapter (``node/lab_isolation.mjs``)
and here: per operation, the student's module it plays, the labs it grades, the student's modules
of earlier chapters whose imports get the reference (``node/reference/*.mjs``) and so the labs
whose code those cases never run. Grading takes those labs out of the evidence for the isolated
labs' failures (:mod:`conformance.grading.attribution`, rule 6): a lab 3.2 bug cannot fail a lab 4
case, so no lab 3.2 failure, real or planted, excuses one.

The hooks need ``module.registerHooks`` (in-thread; Node.js 22.15 and later): Node.js 20's only
hooks run in a worker, which the permission model denies. So under Node.js 20 and bun nothing is
isolated and the attribution rules stand in for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType

from conformance.adapters.node_runtime import NodeVersion

TABLE_FILE = Path(__file__).resolve().parent / "node" / "isolation.json"
#: The first release line whose every supported version has ``module.registerHooks``.
FIRST_ISOLATING_MAJOR = 22
NONE: Mapping[str, frozenset[str]] = MappingProxyType({})


@cache
def isolated_labs() -> Mapping[str, frozenset[str]]:
    """Per isolated lab, the labs whose code its cases never run (from the table)."""
    table = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    isolated: dict[str, frozenset[str]] = {}
    for key, entry in table.items():
        if key.startswith("_"):
            continue
        for lab in entry["labs"]:
            isolated[lab] = isolated.get(lab, frozenset()) | frozenset(entry["isolated_from"])
    return MappingProxyType(isolated)


def isolates(runtime: str, version: NodeVersion | None) -> bool:
    """True when the course adapter isolates labs under ``runtime`` (``node`` or ``bun``) at ``version``."""
    return runtime == "node" and version is not None and version[0] >= FIRST_ISOLATING_MAJOR
