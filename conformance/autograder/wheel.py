"""The wheel of this exact pi-conformance, for an autograder to install.

Decided: a checkout builds its own wheel (``pip wheel --no-deps`` on the checkout, which
fetches the build backend, hatchling, like any pip build: what ``make wheel`` runs); an
installed package writes its wheel again from the files pip installed, checked against the
wheel's ``RECORD`` (:mod:`.repack`); ``--wheel FILE`` gives one instead. Either way the
wheel's version must be this package's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance import __version__
from conformance.autograder.repack import RepackError, repack
from conformance.common.install_hints import checkout_root

_BUILD_TIMEOUT_S = 600


class WheelError(RuntimeError):
    """No wheel of this version can be had: the message says what to give instead."""


def wheel_version(wheel: Path) -> str | None:
    """The version a wheel's file name states (``pi_conformance-0.1.0-py3-none-any.whl``)."""
    parts = wheel.name.split("-")
    if wheel.suffix != ".whl" or len(parts) < 5 or parts[0] != "pi_conformance":
        return None
    return parts[1]


def check_wheel(wheel: Path) -> Path:
    """``wheel`` when it is a pi-conformance wheel of this version, else :class:`WheelError`."""
    if not wheel.is_file():
        raise WheelError(f"--wheel: {wheel} is not a file")
    version = wheel_version(wheel)
    if version is None:
        raise WheelError(f"--wheel: {wheel.name} is not a pi-conformance wheel (pi_conformance-VERSION-py3-none-any.whl)")
    if version != __version__:
        raise WheelError(
            f"--wheel: {wheel.name} is version {version}, but this pi-conformance is {__version__}; give the wheel of {__version__}"
        )
    return wheel


def obtain_wheel(given: Path | None, work: Path) -> Path:
    """The wheel to ship: ``given`` (checked), else one built from this checkout, else this install's, into ``work``."""
    if given is not None:
        return check_wheel(given)
    root = checkout_root()
    if root is None:
        try:
            return check_wheel(repack(work))
        except RepackError as error:
            raise WheelError(
                f"this pi-conformance {__version__} is installed, and its wheel cannot be written again from it: {error}. "
                f"Give --wheel FILE: `make wheel` in a checkout of pi-conformance {__version__} "
                f"builds it (dist/pi_conformance-{__version__}-py3-none-any.whl)"
            ) from error
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(work), str(root)]
    try:
        built = subprocess.run(command, capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise WheelError(f"cannot build the wheel of {root}: {error}") from error
    wheels = sorted(work.glob("pi_conformance-*.whl"))
    if built.returncode != 0 or not wheels:
        raise WheelError(f"cannot build the wheel of {root} (pip wheel exited {built.returncode}):\n{built.stderr.strip()[-2000:]}")
    return check_wheel(wheels[-1])
