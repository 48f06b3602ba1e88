"""The ``pi-course:`` transport: a student's TypeScript project in the course layout.

The course compiles ``packages/pi-course/src/*.ts`` to ``packages/pi-course/dist/src/*.js``.
``node/pi_course_adapter.mjs`` imports those modules and speaks the JSON-lines protocol; this
module finds them, optionally builds the project first, and starts the adapter.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from conformance.adapter import Adapter, HarnessError
from conformance.adapters.process import ProcessAdapter, ProcessOptions
from conformance.adapters.settings import ImplSettings

NODE_ADAPTER = Path(__file__).resolve().parent / "node" / "pi_course_adapter.mjs"
COURSE_MODULES = ("types.js", "event-stream.js", "scripted-model.js")
MINIMUM_NODE = 18
BUILD_TIMEOUT_S = 300
_BUILD_OUTPUT_LIMIT = 6000


class CourseLayoutError(ValueError):
    """PATH is not a course project, or Node.js is missing."""


def package_dir(path: Path) -> Path:
    """The ``packages/pi-course`` folder for a repository root, or ``path`` itself."""
    nested = path / "packages" / "pi-course"
    return nested if nested.is_dir() else path


def modules_dir(path: Path) -> Path:
    """The folder of compiled modules for any of the three accepted forms of PATH."""
    for candidate in (path / "packages" / "pi-course" / "dist" / "src", path / "dist" / "src", path):
        if any((candidate / name).is_file() for name in COURSE_MODULES):
            return candidate
    # Not built yet, or a lab with no module at all: point at where the build writes them.
    return package_dir(path) / "dist" / "src"


def find_node() -> str:
    """The ``node`` executable, checked to be recent enough."""
    node = shutil.which("node")
    if node is None:
        raise CourseLayoutError(f"pi-course: needs Node.js {MINIMUM_NODE}+ on PATH, and no 'node' was found")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    match = re.match(r"v(\d+)", version)
    if match is None or int(match[1]) < MINIMUM_NODE:
        raise CourseLayoutError(f"pi-course: needs Node.js {MINIMUM_NODE}+, found {version or 'an unknown version'}")
    return node


def build(project: Path) -> str | None:
    """Run the project's build (``npm run build``, else ``npx tsc``); the failure report, or None."""
    package = package_dir(project)
    npm = shutil.which("npm") or "npm"
    command = [npm, "run", "build"] if (package / "package.json").is_file() else [shutil.which("npx") or "npx", "tsc", "-p", "."]
    try:
        result = subprocess.run(command, cwd=package, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{' '.join(command)} could not run: {error}"
    if result.returncode == 0:
        return None
    output = (result.stdout + result.stderr).strip()
    if len(output) > _BUILD_OUTPUT_LIMIT:
        output = "…" + output[-_BUILD_OUTPUT_LIMIT:]
    shown = " ".join([Path(command[0]).name, *command[1:]])
    return f"{shown} exited with status {result.returncode}:\n{output}"


class FailedBuildAdapter(Adapter):
    """Stands in for a project whose build failed: every case errors with a short reason."""

    def __init__(self, name: str, report: str) -> None:
        self.name = name
        self.report = report

    def prepare(self, operation: str, lab: str) -> None:
        raise HarnessError(f"not run: the build failed: {summary_line(self.report)}")


def summary_line(report: str) -> str:
    """The command's status and the build output's last line that names an error."""
    lines = [line.strip() for line in report.splitlines() if line.strip()]
    if not lines:
        return "no output"
    # npm's own "npm error ..." lines and its "> script" echo only restate the command.
    own = [line for line in lines[1:] if not line.startswith(("npm ", ">"))]
    errors = [line for line in own if "error" in line.lower()] or own
    return f"{lines[0]} {errors[-1]}" if errors else lines[0]


def pi_course_adapter(path_text: str, settings: ImplSettings) -> Adapter:
    """An adapter for the course project at ``path_text``."""
    if not path_text:
        raise CourseLayoutError("pi-course: needs a path, as in pi-course:./my-course-repo")
    path = Path(path_text).expanduser().resolve()
    if not path.is_dir():
        raise CourseLayoutError(f"pi-course: {path_text!r} is not a folder")
    node = find_node()
    if settings.build:
        report = build(path)
        if report is not None:
            print(f"pi-course: the build of {path} failed:\n{report}", file=sys.stderr)
            return FailedBuildAdapter(path.name, report)
    modules = modules_dir(path)
    options = ProcessOptions.from_settings([node, str(NODE_ADAPTER), str(modules)], settings, cwd=package_dir(path))
    return ProcessAdapter(options, name=path.name)
