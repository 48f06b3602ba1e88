"""Read a small YAML (or JSON) settings file, turning I/O and syntax errors into one error type."""

from __future__ import annotations

from pathlib import Path

import yaml


def read_yaml(path: Path, what: str, error: type[Exception]) -> object:
    """The parsed content of ``path``; ``error`` names ``what`` the file is and why it failed."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as problem:
        raise error(f"cannot read the {what} {path}: {problem}") from problem
    except yaml.YAMLError as problem:
        raise error(f"{path}: the {what} is neither valid YAML nor JSON: {' '.join(str(problem).split())}") from problem
