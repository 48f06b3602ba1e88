"""The commands ``fixtures new`` prints next: each names an implementation of the case's profile that works here.

A case of the course is checked against the bundled reference (the default ``--impl``). A
case of ``pi-ai-1`` needs an implementation of pi-ai-1: the upstream package when it is
installed (``PI_AI_PACKAGE_DIR``, the test suite's ``.cache/pi-ai-1.6.0``, or the manual's
``/tmp/pi-ai``), else the Python port in ``examples/`` (a checkout), else how to install the package.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from conformance.adapters.kinds import KINDS, submission_spec
from conformance.model.paths import data_root
from conformance.model.profiles import DEFAULT_PROFILE

PI_AI_VERSION = "1.6.0"
PI_AI_INSTALL = f"npm install --prefix /tmp/pi-ai @earendil-works/pi-ai@{PI_AI_VERSION}"
#: The example port of pi-ai-1, in process (a kind that imports its code).
PORT_IMPL = next(kind.prefix for kind in KINDS if kind.imports_code) + "pi_ai_port.conformance:ADAPTER"


def upstream_package() -> Path | None:
    """A folder holding an installed ``@earendil-works/pi-ai``, if one is found where this project installs it."""
    from conformance.adapters.pi_ai import PiAiLayoutError, package_folder

    given = os.environ.get("PI_AI_PACKAGE_DIR")
    candidates = [Path(given)] if given else []
    candidates += [data_root() / ".cache" / f"pi-ai-{PI_AI_VERSION}", Path("/tmp/pi-ai")]
    for candidate in candidates:
        try:
            package_folder(candidate)
        except PiAiLayoutError:
            continue
        return candidate
    return None


def run_commands(profile: str, case_id: str, fixtures: str | None = None) -> list[str]:
    """The command (or commands, with the one to run first) that checks ``case_id`` of ``profile``."""
    selected = f"{' --fixtures ' + shlex.quote(fixtures) if fixtures else ''} -k {case_id}"
    if profile == DEFAULT_PROFILE:
        return [f"pi-conformance run{selected}"]
    package = upstream_package()
    if package is not None:
        return [f"pi-conformance run --profile {profile} --impl {shlex.quote(submission_spec(profile, package))}{selected}"]
    examples = data_root() / "examples"
    if (examples / "pi_ai_port").is_dir():
        where = shlex.quote(str(examples))
        return [f"PYTHONPATH={where} pi-conformance run --profile {profile} --impl {PORT_IMPL}{selected}"]
    return [PI_AI_INSTALL, f"pi-conformance run --profile {profile} --impl {submission_spec(profile, '/tmp/pi-ai')}{selected}"]
