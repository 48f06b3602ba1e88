"""Hostile student projects, generated at test time from ``tests/support/js/course-correct``.

Each helper copies the correct project into a folder and adds a few lines of JavaScript to
one of its compiled modules, the way a student (or an accident) would. Processes that the
attacks leave behind carry a marker in their command line, so tests can tell whether
anything is still running afterwards.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import time
from pathlib import Path

from tests.support.paths import REPO

CORRECT = REPO / "tests" / "support" / "js" / "course-correct"
MODULES = Path("packages") / "pi-course" / "dist" / "src"


def copy_project(target: Path) -> Path:
    """A fresh copy of the correct course project at ``target``."""
    shutil.copytree(CORRECT, target)
    return target


def empty_project(target: Path) -> Path:
    """A course project with nothing implemented yet: ``package.json`` files, no compiled module."""
    copy_project(target)
    shutil.rmtree(target / MODULES)
    return target


def append_to_module(project: Path, module: str, code: str) -> None:
    """Append ``code`` to a compiled module (ES ``import`` declarations are hoisted, so any place works)."""
    path = project / MODULES / module
    path.write_text(path.read_text(encoding="utf-8") + "\n" + code + "\n", encoding="utf-8")


def replace_modules(project: Path, code_by_module: dict[str, str]) -> None:
    """Replace the compiled modules' whole text."""
    (project / MODULES).mkdir(parents=True, exist_ok=True)
    for module, code in code_by_module.items():
        (project / MODULES / module).write_text(code + "\n", encoding="utf-8")


def new_marker() -> str:
    """A unique word to put in the command line of the processes an attack starts."""
    return f"pi-attack-{secrets.token_hex(6)}"


def running_with(marker: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_until_gone(marker: str, timeout_s: float = 5.0) -> list[int]:
    """Wait for every process carrying ``marker`` to end; the pids still running after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while (left := running_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def kill_leftovers(marker: str) -> None:
    """Clean up after a failing test: SIGKILL whatever still carries ``marker``."""
    for pid in running_with(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def spawn_child_js(marker: str, options: str) -> str:
    """JavaScript that starts a node child which sleeps 15 minutes, with ``options`` for ``spawn``."""
    argv = json.dumps(["-e", "setTimeout(() => {}, 900000)", marker])
    return f'import {{ spawn as __spawn }} from "node:child_process";\n__spawn(process.execPath, {argv}, {options});'
