"""The one version string of the spec and its fixtures, read from ``spec/spec.md``.

Spec and fixtures are versioned together (semantic versioning, ``CHANGELOG.md``): a case is
only meaningful against the clauses it cites, so a bundle names one version for both.
"""

from __future__ import annotations

import re
from pathlib import Path

from conformance.model.paths import data_root, spec_file
from conformance.model.profiles import get_profile

_VERSION_LINE = re.compile(r"^(?P<what>Spec|Profile) version: (?P<version>\S+)", re.MULTILINE)
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


class VersionError(ValueError):
    """The spec has no usable ``Spec version:`` line."""


def spec_version(path: Path | None = None) -> str:
    """The semantic version on the spec's ``Spec version: X.Y.Z`` line (a profile's document: ``Profile version:``)."""
    spec = path or spec_file()
    match = _VERSION_LINE.search(spec.read_text(encoding="utf-8"))
    if match is None:
        raise VersionError(f"{spec}: no 'Spec version: X.Y.Z' (or 'Profile version: X.Y.Z') line")
    version = match["version"]
    if not _SEMVER.match(version):
        raise VersionError(f"{spec}: {match['what'].lower()} version {version!r} is not a semantic version (X.Y.Z)")
    return version


def profile_version(profile: str) -> str:
    """The version of ``profile``'s clause document: the course's is the spec's, another's its ``Profile version:``."""
    return spec_version(data_root() / get_profile(profile).spec)
