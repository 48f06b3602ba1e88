"""The wheel of this exact pi-conformance, for an autograder to install.

Decided: a checkout builds its own wheel (``pip wheel --no-deps`` on the checkout, which
fetches the build backend, hatchling, like any pip build); an installed package cannot
rebuild itself (a wheel install keeps no ``pyproject.toml``), so it needs ``--wheel FILE``,
the wheel it was installed from. Either way the wheel's version must be this package's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance import __version__

_BUILD_TIMEOUT_S = 600


class WheelError(RuntimeError):
    """No wheel of this version can be had: the message says what to give instead."""


def checkout_root() -> Path | None:
    """The source checkout this package runs from, or None when it is installed from a wheel."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "pi-conformance"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


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
    """The wheel to ship: ``given`` (checked), else one built from this checkout into ``work``."""
    if given is not None:
        return check_wheel(given)
    root = checkout_root()
    if root is None:
        raise WheelError(
            f"this pi-conformance {__version__} is installed, not a checkout, so it cannot build its own wheel: "
            f"give --wheel FILE (the pi_conformance-{__version__}-py3-none-any.whl it was installed from; "
            f"pip download pi-conformance=={__version__} --no-deps fetches it from an index that has it)"
        )
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(work), str(root)]
    try:
        built = subprocess.run(command, capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise WheelError(f"cannot build the wheel of {root}: {error}") from error
    wheels = sorted(work.glob("pi_conformance-*.whl"))
    if built.returncode != 0 or not wheels:
        raise WheelError(f"cannot build the wheel of {root} (pip wheel exited {built.returncode}):\n{built.stderr.strip()[-2000:]}")
    return check_wheel(wheels[-1])
