"""The ``pi-course:`` transport: a student's TypeScript project in the course layout.

The course compiles ``packages/pi-course/src/*.ts`` to ``packages/pi-course/dist/src/*.js``.
``node/pi_course_adapter.mjs`` imports those modules and speaks the JSON-lines protocol; this
module finds them, optionally builds the project first, and starts the adapter.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from conformance.adapter import Adapter, HarnessError
from conformance.adapters.process import SESSION_MARKER, ProcessAdapter, ProcessOptions, minimal_environment, stop_tree, supervisor_argv
from conformance.adapters.sandbox import (
    SANDBOX_HOME,
    Sandbox,
    SandboxUnavailable,
    bwrap_command,
    choose_isolation,
    find_bwrap,
    runtime_path,
    runtime_roots,
)
from conformance.adapters.settings import ImplSettings

NODE_ADAPTER = Path(__file__).resolve().parent / "node" / "pi_course_adapter.mjs"
#: The pinned TypeScript compiler (``make toolchain`` installs it with ``npm ci``).
TOOLCHAIN = NODE_ADAPTER.parent / "toolchain"
TOOLCHAIN_BIN = TOOLCHAIN / "node_modules" / ".bin"
#: A registry address nothing listens on (the discard port of the loopback).
UNREACHABLE_REGISTRY = "http://127.0.0.1:9/"
COURSE_MODULES = ("types.js", "event-stream.js", "scripted-model.js")
MINIMUM_NODE = 18
BUILD_TIMEOUT_S = 300
_BUILD_OUTPUT_LIMIT = 6000


class CourseLayoutError(ValueError):
    """PATH is not a course project, or Node.js is missing."""


class NotACourseProject(CourseLayoutError):
    """PATH holds no course project at all: no ``package.json`` and no compiled module (status ``not-a-project``)."""


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
    try:
        found = os.stat(node)
    except OSError as error:
        raise CourseLayoutError(f"pi-course: cannot run {node}: {error.strerror}") from error
    version = _node_version(node, found.st_ino, found.st_mtime_ns)
    match = re.match(r"v(\d+)", version)
    if match is None or int(match[1]) < MINIMUM_NODE:
        raise CourseLayoutError(f"pi-course: needs Node.js {MINIMUM_NODE}+, found {version or 'an unknown version'}")
    return node


@functools.cache
def _node_version(node: str, inode: int, mtime_ns: int) -> str:
    # Asked once per executable file (a build and an adapter each need node): a Node.js start
    # costs about 80 ms of CPU. The file's identity is in the key, so a replaced node is asked again.
    del inode, mtime_ns
    return subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()


def is_course_project(path: Path) -> bool:
    """Whether ``path`` holds a course project: a ``package.json`` (in it or in ``packages/pi-course``) or compiled modules."""
    if (path / "package.json").is_file() or (path / "packages" / "pi-course" / "package.json").is_file():
        return True
    return any((modules_dir(path) / name).is_file() for name in COURSE_MODULES)


def check_course_project(path: Path) -> None:
    """Raise :class:`NotACourseProject` unless ``path`` holds a course project (see :func:`is_course_project`)."""
    if not is_course_project(path):
        raise NotACourseProject(
            f"pi-course: {path} is not a course project: no package.json (in it or in packages/pi-course) "
            f"and no compiled modules ({', '.join(COURSE_MODULES)})"
        )


def build_dir(project: Path) -> Path | None:
    """Where ``npm run build`` runs: the folder of the project's ``package.json``; None when there is none."""
    for candidate in (package_dir(project), project):
        if (candidate / "package.json").is_file():
            return candidate
    return None


def build_environment(home: str, node: str) -> dict[str, str]:
    """The build's environment: offline npm that never asks to install, the pinned ``tsc`` on PATH.

    The registry points at a closed port, so even an npm that ignored ``offline`` (or a
    script that calls ``npx``) cannot fetch a package; the home folder is fresh, so no
    ``~/.npmrc`` of the grader's (tokens, another registry) is read.
    """
    env = minimal_environment({})
    env.update(
        {
            "HOME": home,
            "TMPDIR": home,
            "PATH": runtime_path([str(TOOLCHAIN_BIN / "tsc"), node]),
            "npm_config_offline": "true",
            "npm_config_yes": "false",
            "npm_config_registry": UNREACHABLE_REGISTRY,
            "npm_config_cache": str(Path(home) / ".npm"),
            "npm_config_audit": "false",
            "npm_config_fund": "false",
            "npm_config_update_notifier": "false",
        }
    )
    return env


def build(project: Path, settings: ImplSettings | None = None) -> str | None:
    """Run the project's own ``npm run build``; the failure report, or None when it built.

    Nothing is ever fetched and ``npx`` is never run: npm is offline and, in the sandbox,
    has no network; ``tsc`` is the project's own (``node_modules/.bin``, which npm puts
    first on PATH) or the toolchain pinned in ``node/toolchain``. A folder without
    ``package.json`` is not built (compiled modules are used as they are; a folder with
    neither is :class:`NotACourseProject`, which :func:`pi_course_adapter` raises).

    In the sandbox the project folder is the only writable path (the build writes its
    ``dist/`` there, as the course layout expects); the run afterwards sees it read-only.
    """
    settings = settings or ImplSettings()
    where = build_dir(project)
    if where is None:
        return None
    try:
        node = find_node()
        isolation = choose_isolation(settings.sandbox)
    except (CourseLayoutError, SandboxUnavailable) as error:
        return f"npm run build could not run: {error}"
    npm = shutil.which("npm") or "npm"
    command = [npm, "run", "build"]
    with tempfile.TemporaryDirectory(prefix="pi-build-") as home, tempfile.TemporaryFile() as log:
        env = build_environment(SANDBOX_HOME if isolation == "bwrap" else home, node)
        if isolation == "bwrap":
            sandbox = Sandbox(read_only=(TOOLCHAIN, *runtime_roots([node, npm])), writable=(project,), chdir=where)
            command = bwrap_command(sandbox, command, find_bwrap() or "bwrap")
        marker = secrets.token_hex(16)
        env[SESSION_MARKER] = marker
        try:
            # Output to a file, not a pipe: a stray process that keeps it open cannot stall the grader.
            process = subprocess.Popen(
                supervisor_argv(command),
                cwd=where,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            return f"npm run build could not run: {error}"
        try:
            code: int | None = process.wait(timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            stop_tree(process, marker)
        log.seek(0)
        output = log.read().decode("utf-8", errors="replace").strip()
    if code == 0:
        return None
    if len(output) > _BUILD_OUTPUT_LIMIT:
        output = "…" + output[-_BUILD_OUTPUT_LIMIT:]
    if code is None:
        return f"npm run build did not finish within {BUILD_TIMEOUT_S} s:\n{output}"
    return f"npm run build exited with status {code}:\n{output}"


class FailedBuildAdapter(Adapter):
    """Stands in for a project whose build failed: every case errors with a short reason."""

    def __init__(self, name: str, report: str, isolation: str = "none") -> None:
        self.name = name
        self.report = report
        self.isolation = isolation

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
    check_course_project(path)
    node = find_node()
    try:
        isolation = choose_isolation(settings.sandbox)
    except SandboxUnavailable as error:
        raise CourseLayoutError(str(error)) from error
    if settings.build:
        report = build(path, settings)
        if report is not None:
            print(f"pi-course: the build of {path} failed:\n{report}", file=sys.stderr)
            return FailedBuildAdapter(path.name, report, isolation)
    modules = modules_dir(path)
    sandbox = None
    if isolation == "bwrap":
        # The adapter, the submission (read-only) and the Node.js runtime; nothing else of this machine.
        sandbox = Sandbox(read_only=(NODE_ADAPTER.parent, path, *runtime_roots([node])), chdir=package_dir(path))
    options = ProcessOptions.from_settings([node, str(NODE_ADAPTER), str(modules)], settings, cwd=package_dir(path), sandbox=sandbox)
    return ProcessAdapter(options, name=path.name)
