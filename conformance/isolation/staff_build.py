"""How the grader builds a course project: the staff files pinned over the submission's, and the command.

A submission's ``package.json`` and ``tsconfig.json`` are its author's: a build script
``tsc -p tsconfig.json || true`` turns a type error into a pass, a ``tsconfig.json`` with
``"noCheck": true`` or an ``include`` of nothing checks nothing. So, as autograders usually
do, the staff's copies replace the submission's in the build's copy before anything runs,
and the grader runs its own command:

* ``tsc`` (the default): the pinned compiler (:mod:`conformance.toolchain`) as
  ``tsc -p tsconfig.json`` in the package folder, started by the grader, not by npm. The
  submission's scripts never run. A package with no TypeScript under ``src/`` has nothing to
  compile: its compiled modules are graded as they are.
* ``npm-run-build``: ``npm run build`` of the (pinned) ``package.json``, for a course whose
  build does more than compile; pin ``package.json`` so the script is the staff's.

Staff name the files in the rubric's ``build:`` key (``docs/building-submissions.md``); by
default the course's ``package.json`` and ``tsconfig.json`` (``conformance/toolchain/course/``)
are pinned in the package folder (``packages/pi-course``, or the submission itself).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from conformance.isolation.submission_copy import SKIPPED_NAMES, remove_tree

BuildCommand = Literal["tsc", "npm-run-build"]
BUILD_COMMANDS: tuple[BuildCommand, ...] = ("tsc", "npm-run-build")
#: The course's own files, shipped with the grader: what is pinned when the rubric names none.
COURSE_FILES = Path(__file__).resolve().parent.parent / "toolchain" / "course"
DEFAULT_PINS = ("package.json", "tsconfig.json")
#: In the rubric, this value pins the shipped course copy of a file of :data:`DEFAULT_PINS`.
SHIPPED = "shipped"
#: A staff file larger than this is refused (a rubric that names the wrong file).
MAX_PIN_BYTES = 1024 * 1024
#: Where the grader's ``tsc`` looks for the TypeScript it compiles (relative to the package folder).
SOURCE_FOLDER = "src"
_TYPESCRIPT_SUFFIXES = (".ts", ".mts", ".cts", ".tsx")


class StaffBuildError(ValueError):
    """A ``build:`` key that cannot be used: an unknown command, a path outside the package, an unreadable file."""


@dataclass(frozen=True)
class StaffBuild:
    """The files that replace the submission's before its build (path in the package folder, bytes) and the command."""

    pins: tuple[tuple[str, bytes], ...]
    command: BuildCommand = "tsc"

    @property
    def pinned(self) -> tuple[str, ...]:
        """The pinned paths, for reports."""
        return tuple(path for path, _ in self.pins)

    def describe(self) -> str:
        """One line: the command and what is pinned."""
        command = "tsc -p tsconfig.json (the pinned compiler)" if self.command == "tsc" else "npm run build"
        return f"{command}; staff files: {', '.join(self.pinned) or 'none'}"


def shipped_pins(names: tuple[str, ...] = DEFAULT_PINS) -> tuple[tuple[str, bytes], ...]:
    """The course's own copies of ``names``, as shipped in :data:`COURSE_FILES`."""
    return tuple((name, (COURSE_FILES / name).read_bytes()) for name in names)


DEFAULT_STAFF_BUILD = StaffBuild(shipped_pins(), "tsc")


def parse_staff_build(raw: Mapping[str, object] | None, base: Path) -> StaffBuild:
    """The rubric's ``build:`` value (already schema-checked); paths of staff files are relative to ``base``.

    Without ``pin:`` the shipped course files are pinned; with it, exactly the files it names
    (``pin: {}`` pins nothing). :class:`StaffBuildError` for a path outside the package folder
    or a file that cannot be read.
    """
    raw = raw or {}
    command = raw.get("command", "tsc")
    if command not in BUILD_COMMANDS:
        raise StaffBuildError(f"build.command: {command!r} is not one of {', '.join(BUILD_COMMANDS)}")
    pin = raw.get("pin")
    if pin is None:
        return StaffBuild(shipped_pins(), command)
    if not isinstance(pin, Mapping):
        raise StaffBuildError("build.pin: a mapping of a path in the package folder to the staff file that replaces it")
    pins = []
    for target, source in pin.items():
        where = pin_path_problem(str(target))
        if where:
            raise StaffBuildError(f"build.pin.{target}: {where}")
        pins.append((posixpath.normpath(str(target)), _read_staff_file(str(target), str(source), base)))
    return StaffBuild(tuple(pins), command)


def pin_path_problem(path: str) -> str | None:
    """Why ``path`` cannot be pinned (it must be a relative path inside the package folder); None when it can."""
    normal = posixpath.normpath(path) if path else ""
    if not normal or normal == "." or posixpath.isabs(path) or normal.startswith("../") or normal == "..":
        return "not a relative path inside the package folder"
    if any(part in SKIPPED_NAMES for part in normal.split("/")):
        return f"no path through {' or '.join(sorted(SKIPPED_NAMES))} can be pinned (the copy never holds them)"
    return None


def _read_staff_file(target: str, source: str, base: Path) -> bytes:
    if source == SHIPPED:
        if target not in DEFAULT_PINS:
            shipped = ", ".join(DEFAULT_PINS)
            raise StaffBuildError(f"build.pin.{target}: {SHIPPED!r} names the course's own copy, shipped only for {shipped}")
        return (COURSE_FILES / target).read_bytes()
    path = base / source
    try:
        if path.stat().st_size > MAX_PIN_BYTES:
            raise StaffBuildError(f"build.pin.{target}: {path} is larger than {MAX_PIN_BYTES >> 20} MiB")
        return path.read_bytes()
    except OSError as error:
        raise StaffBuildError(f"build.pin.{target}: cannot read {path}: {error.strerror}") from error


def pin_files(package: Path, build: StaffBuild) -> None:
    """Write the staff files into ``package`` (the build's copy), replacing whatever the submission had there.

    A link or file in the way of a folder the path needs is removed, so a staff file is never
    written through a link of the submission's.
    """
    for relative, data in build.pins:
        folder = package
        *parents, name = relative.split("/")
        for part in parents:
            folder = folder / part
            if os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()):
                remove_tree(folder)
            folder.mkdir(mode=0o755, exist_ok=True)
        target = folder / name
        if os.path.lexists(target):
            remove_tree(target)
        target.write_bytes(data)
        target.chmod(0o644)


def has_typescript_sources(package: Path) -> bool:
    """Whether ``package/src`` holds a TypeScript file (declarations aside): what the grader's ``tsc`` has to compile."""
    pending = [package / SOURCE_FOLDER]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    elif entry.name.endswith(_TYPESCRIPT_SUFFIXES) and not entry.name.endswith(".d.ts"):
                        return True
        except OSError:
            continue
    return False
