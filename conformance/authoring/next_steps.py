"""The commands ``fixtures new`` prints next: each names an implementation of the case's profile that works here.

A case of the course is checked against the bundled reference (the default ``--impl``). A
case of another profile needs an implementation of that profile, found from its registry
entry (``conformance/model/profiles.py``): its reference package when it is installed where
this project installs it (``PI_<NAME>_PACKAGE_DIR``, the test suite's ``.cache/<name>-<version>``,
or the manual's ``/tmp/<name>``; ``<name>`` is the package's name without its scope), else the
profile's example port in ``examples/`` (a checkout), else how to install the package.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from conformance.adapters.kinds import KINDS, submission_spec
from conformance.model.paths import data_root
from conformance.model.profiles import DEFAULT_PROFILE, get_profile


def _in_process_prefix() -> str:
    """The prefix of the kind that imports a Python port into this process (``python:``)."""
    return next(kind.prefix for kind in KINDS if kind.imports_code)


def _short_name(package: str) -> str:
    """``@earendil-works/pi-ai`` -> ``pi-ai``: what the folders and the variable are named after."""
    return package.rsplit("/", 1)[-1]


def package_variable(profile: str) -> str | None:
    """The variable naming a folder that holds ``profile``'s reference package (``PI_AI_PACKAGE_DIR``), or None."""
    reference = get_profile(profile).reference_package
    if reference is None:
        return None
    return "PI_" + _short_name(reference[0]).upper().removeprefix("PI-").replace("-", "_") + "_PACKAGE_DIR"


def upstream_package(profile: str) -> Path | None:
    """A folder holding ``profile``'s installed reference package, if one is found where this project installs it."""
    reference = get_profile(profile).reference_package
    variable = package_variable(profile)
    if reference is None or variable is None:
        return None
    name, version = reference
    given = os.environ.get(variable)
    candidates = [Path(given)] if given else []
    candidates += [data_root() / ".cache" / f"{_short_name(name)}-{version}", Path("/tmp") / _short_name(name)]
    return next((candidate for candidate in candidates if _holds(candidate, name)), None)


def _holds(folder: Path, package: str) -> bool:
    """Whether ``folder`` holds ``package`` as ``node_modules/PACKAGE`` or is it (adapters/pi_ai.package_folder's rule)."""
    from conformance.adapters.pi_ai import PiAiLayoutError, package_folder

    try:
        package_folder(folder, package)
    except PiAiLayoutError:
        return False
    return True


def run_commands(profile: str, case_id: str, fixtures: str | None = None) -> list[str]:
    """The command (or commands, with the one to run first) that checks ``case_id`` of ``profile``."""
    selected = f"{' --fixtures ' + shlex.quote(fixtures) if fixtures else ''} -k {case_id}"
    if profile == DEFAULT_PROFILE:
        return [f"pi-conformance run{selected}"]
    package = upstream_package(profile)
    if package is not None:
        return [f"pi-conformance run --profile {profile} --impl {shlex.quote(submission_spec(profile, package))}{selected}"]
    entry = get_profile(profile)
    examples = data_root() / "examples"
    if entry.example_port is not None and (examples / entry.example_port.split(".", 1)[0].split(":", 1)[0]).is_dir():
        where = shlex.quote(str(examples))
        return [f"PYTHONPATH={where} pi-conformance run --profile {profile} --impl {_in_process_prefix()}{entry.example_port}{selected}"]
    if entry.reference_package is None:
        return [f"pi-conformance run --profile {profile} --impl IMPL{selected}   # IMPL: an implementation of {profile}"]
    name, version = entry.reference_package
    folder = Path("/tmp") / _short_name(name)
    install = f"npm install --prefix {folder} {name}@{version}"
    return [install, f"pi-conformance run --profile {profile} --impl {submission_spec(profile, folder)}{selected}"]
