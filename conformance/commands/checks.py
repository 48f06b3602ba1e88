"""Checks of command-line values made before any work starts: numbers, and where outputs go.

A bad ``--timeout`` or an output path that cannot be written would otherwise be found
only after minutes of grading (or silently change the grades: a NaN timeout, a budget of
0 meaning no limit). Numbers are checked by argparse ``type=`` functions, so a bad one is
argparse's one-line usage error with exit status 2; paths by :func:`output_file_problem`
and :func:`output_folder_problem`, whose message the command prints before exiting 2.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Iterable
from pathlib import Path

#: Exit status of every command for a usage error, as argparse's own.
EXIT_USAGE = 2


def positive_number(text: str) -> float:
    """An argparse type: a finite number above 0 (``nan``, ``inf``, ``0`` and ``-1`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number above 0")
    return value


def positive_integer(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def non_negative_integer(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 0")
    return value


def output_file_problem(option: str, path: Path) -> str | None:
    """Why a file cannot be written at ``path`` (None when it can): a folder there, no writable folder."""
    if path.is_dir():
        return f"{option} {path}: is a folder, but a file is meant"
    if path.exists() and not os.access(path, os.W_OK):
        return f"{option} {path}: the file is not writable"
    return _folder_problem(option, path, path.absolute().parent)


def output_folder_problem(option: str, path: Path, files: Iterable[str] = (), folders: Iterable[str] = ()) -> str | None:
    """Why ``path`` cannot be an output folder (None when it can).

    ``files`` and ``folders`` are names written inside it: an existing folder where a file
    goes, or a file where a folder goes, is refused as well.
    """
    if path.exists() and not path.is_dir():
        return f"{option} {path}: is a file, but a folder is meant"
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        return f"{option} {path}: the folder is not writable"
    problem = _folder_problem(option, path, path.absolute())
    if problem:
        return problem
    for name in files:
        if (path / name).is_dir():
            return f"{option} {path}: {path / name} is a folder, but the grader writes a file there"
    for name in folders:
        if (path / name).exists() and not (path / name).is_dir():
            return f"{option} {path}: {path / name} is a file, but the grader writes a folder there"
    return None


def same_file_problem(targets: Iterable[tuple[str, str | None]]) -> str | None:
    """Two options naming one output file (the second would overwrite the first)."""
    seen: dict[Path, str] = {}
    for option, target in targets:
        if not target:
            continue
        key = Path(target).absolute()
        if key in seen:
            return f"{seen[key]} and {option} both name {target}; give each report its own file"
        seen[key] = option
    return None


def _folder_problem(option: str, target: Path, folder: Path) -> str | None:
    """The folder ``folder`` exists and is writable, or can be created in the nearest one that does."""
    ancestor = folder
    while not ancestor.exists():
        if ancestor.parent == ancestor:
            break
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{option} {target}: {ancestor} is a file, so no folder can be made inside it"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"{option} {target}: cannot write in the folder {ancestor}"
    return None
