"""How to install an optional part of pi-conformance, in words that work where this copy runs.

A checkout (an editable install) installs an extra with ``pip install -e '.[EXTRA]'`` in the
checkout; a venv made from the wheel cannot (no index holds pi-conformance, and there is no
``.`` to install), so it installs the extra's own requirements with its own pip; a pipx
install injects them. :func:`extra_command` says which, with the interpreter actually running.
"""

from __future__ import annotations

import re
import shlex
import sys
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "pi-conformance"
#: The extras and their requirements, as pyproject.toml declares them (the fallback when metadata is missing).
_KNOWN = {"fuzz": ["hypothesis>=6.100"]}


def checkout_root() -> Path | None:
    """The source checkout this package runs from, or None when it is installed from a wheel."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "pi-conformance"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


def extra_requirements(extra: str) -> list[str]:
    """The requirements ``pi-conformance[EXTRA]`` adds (from the installed metadata)."""
    try:
        declared = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        declared = []
    marker = re.compile(r";\s*extra\s*==\s*['\"]" + re.escape(extra) + r"['\"]\s*$")
    found = [marker.split(requirement)[0].strip() for requirement in declared if marker.search(requirement)]
    return found or _KNOWN.get(extra, [])


def pipx_venv() -> str | None:
    """The pipx venv's name when this interpreter is one of pipx's (``.../pipx/venvs/NAME``), else None."""
    parts = Path(sys.prefix).parts
    if len(parts) >= 3 and parts[-3:-1] == ("pipx", "venvs"):
        return parts[-1]
    return None


def extra_command(extra: str) -> str:
    """The one command that installs ``extra`` for this very copy of pi-conformance."""
    root = checkout_root()
    if root is not None:
        return f"{shlex.quote(sys.executable)} -m pip install -e {shlex.quote(f'{root}[{extra}]')}"
    requirements = " ".join(shlex.quote(requirement) for requirement in extra_requirements(extra))
    venv = pipx_venv()
    if venv is not None:
        return f"pipx inject {venv} {requirements}"
    return f"{shlex.quote(sys.executable)} -m pip install {requirements}"
