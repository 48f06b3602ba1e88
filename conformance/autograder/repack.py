"""The wheel of an installed pi-conformance, put back together from the files pip installed.

An installed copy keeps no ``pyproject.toml`` to build from, but it keeps every file of its wheel
and the wheel's own ``RECORD`` (each file's sha256). So the wheel can be written again: the same
files, byte for byte, checked against that record first. A file edited since it was installed,
or missing, refuses the repack (the message names it): the autograder must ship what was released,
not a local edit. What pip adds at install time is left out (bytecode caches, the console script,
``INSTALLER``, ``REQUESTED``, ``direct_url.json``) and ``RECORD`` is written anew.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "pi-conformance"
#: dist-info files pip writes when it installs (not part of the wheel).
_INSTALL_ONLY = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}


class RepackError(RuntimeError):
    """The installed files are not the wheel's any more (or not there): the message says which."""


def _kept(name: str) -> bool:
    parts = name.split("/")
    if parts[0] == ".." or "__pycache__" in parts or name.endswith(".pyc"):
        return False
    return not (parts[0].endswith(".dist-info") and parts[-1] in _INSTALL_ONLY)


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _tag(wheel_file: str) -> str:
    """The wheel's tag from its ``WHEEL`` file (``py3-none-any``)."""
    tags = [line.split(":", 1)[1].strip() for line in wheel_file.splitlines() if line.startswith("Tag:")]
    return tags[0] if len(tags) == 1 else "py3-none-any"


def repack(into: Path) -> Path:
    """Write the installed distribution's wheel into ``into``; its path (:class:`RepackError` when it cannot be trusted)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError as error:
        raise RepackError(f"{DISTRIBUTION} is not installed here") from error
    files = [entry for entry in dist.files or () if _kept(str(entry))]
    if not any(str(entry).endswith(".dist-info/WHEEL") for entry in files):
        raise RepackError(f"{DISTRIBUTION} {dist.version} was not installed from a wheel (its RECORD names no WHEEL file)")
    contents: dict[str, bytes] = {}
    for entry in files:
        name = str(entry)
        try:
            data = Path(str(dist.locate_file(entry))).read_bytes()
        except OSError as error:
            raise RepackError(f"the installed file {name} cannot be read: {error}") from error
        if entry.hash is None or entry.hash.mode != "sha256" or entry.hash.value != _digest(data):
            raise RepackError(f"the installed file {name} is not the one the wheel installed (its sha256 differs from RECORD)")
        contents[name] = data
    info = next(name for name in contents if name.endswith(".dist-info/WHEEL")).rsplit("/", 1)[0]
    wheel = into / f"pi_conformance-{dist.version}-{_tag(contents[f'{info}/WHEEL'].decode())}.whl"
    into.mkdir(parents=True, exist_ok=True)
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in contents.items()] + [f"{info}/RECORD,,"]
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(contents.items()):
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 2, 2, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
        archive.writestr(zipfile.ZipInfo(f"{info}/RECORD", date_time=(2020, 2, 2, 0, 0, 0)), "\n".join(record) + "\n", zipfile.ZIP_DEFLATED)
    return wheel
