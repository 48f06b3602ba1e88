"""The ``pi-course:`` transport: a student's TypeScript project in the course layout.

The course compiles ``packages/pi-course/src/*.ts`` to ``packages/pi-course/dist/src/*.js``.
``node/pi_course_adapter.mjs`` imports those modules and speaks the JSON-lines protocol; this
module finds them, optionally builds the project first, and starts the adapter.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conformance import toolchain
from conformance.adapters.course_build import BuildResult, build_in_copy, build_label
from conformance.adapters.interface import Adapter, HarnessError
from conformance.adapters.node_runtime import OLDEST_MAJOR, SUPPORTED_NODE, NodeVersion, UnsupportedNode, check_supported, isolation_flags
from conformance.adapters.process import ProcessAdapter
from conformance.adapters.process_options import ProcessOptions
from conformance.adapters.settings import ImplSettings
from conformance.isolation.sandbox import Isolation, Sandbox, SandboxUnavailable, choose_isolation, runtime_roots
from conformance.isolation.staff_build import has_typescript_sources

NODE_ADAPTER = Path(__file__).resolve().parent / "node" / "pi_course_adapter.mjs"
COURSE_MODULES = ("types.js", "event-stream.js", "scripted-model.js", "provider-adapter.js", "tool.js", "agent-loop.js", "agent.js")
#: The oldest Node.js major version supported (the whole rule, 20.x or 22.19+, is :mod:`.node_runtime`'s).
MINIMUM_NODE = OLDEST_MAJOR


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


def find_node(who: str = "pi-course") -> str:
    """The ``node`` executable, checked to be a supported version; the error names ``who`` needs it."""
    node = shutil.which("node")
    if node is None:
        raise CourseLayoutError(f"{who}: needs {SUPPORTED_NODE} on PATH, and no 'node' was found")
    node_version(node, who)
    return node


def node_version(node: str, who: str = "pi-course") -> NodeVersion:
    """The version of the Node.js at ``node``, checked to be supported (:func:`.node_runtime.check_supported`)."""
    try:
        found = os.stat(node)
    except OSError as error:
        raise CourseLayoutError(f"{who}: cannot run {node}: {error.strerror}") from error
    try:
        return check_supported(_node_version(node, found.st_ino, found.st_mtime_ns), who)
    except UnsupportedNode as error:
        raise CourseLayoutError(str(error)) from None


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
            f"{path} is not a course project: no package.json (in it or in packages/pi-course) "
            f"and no compiled modules ({', '.join(COURSE_MODULES)})"
        )


def build_dir(project: Path) -> Path | None:
    """The package folder, where the build runs and the staff files go: the folder of the project's ``package.json``; None when none."""
    for candidate in (package_dir(project), project):
        if (candidate / "package.json").is_file():
            return candidate
    return None


def build(project: Path, settings: ImplSettings | None = None) -> BuildResult:
    """Build the project in a throwaway copy the grader's way (see :mod:`.course_build`, :mod:`.staff_build`).

    The staff files of ``settings.staff_build`` replace the project's, and the grader's
    command runs (by default the pinned ``tsc -p tsconfig.json``, no script of the
    project's). Nothing is ever fetched: npm is offline and, in the sandbox, has no network;
    ``tsc`` is the pinned toolchain's, for every submission alike. A folder with neither
    ``package.json`` nor TypeScript under ``src/`` is not built (compiled modules are graded
    as they are; a folder with no module either is :class:`NotACourseProject`, which
    :func:`pi_course_adapter` raises): deleting ``package.json`` does not skip the type check.
    The submission itself is never written to. The caller removes the built copy once it
    has been graded (:meth:`BuildResult.remove`).
    """
    settings = settings or ImplSettings()
    # The package folder when it has sources, whatever package.json files are where.
    where = package_dir(project) if has_typescript_sources(package_dir(project)) else build_dir(project)
    if where is None:
        return BuildResult(None)
    try:
        node = find_node()
    except CourseLayoutError as error:
        return BuildResult(f"{build_label(settings.staff_build)} could not run: {error}")
    return build_in_copy(project, where, node, settings)


def student_process_needs(build: bool) -> list[Path]:
    """What a course project's processes read besides the submission: for ``--run-as`` to check.

    The supervisor is not among them: it keeps the grader's rights and drops them for the program.
    """
    needs = [NODE_ADAPTER.parent]
    node = shutil.which("node")
    if node is not None:
        needs.append(Path(os.path.realpath(node)))
    if build:
        needs.append(toolchain.folder())
    return needs


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


#: The JavaScript runtimes the course adapter runs under (``pi-course:PATH?runtime=bun``).
RUNTIMES = ("node", "bun")


def split_runtime(text: str) -> tuple[str, str]:
    """``PATH[?runtime=node|bun]`` as (PATH, runtime); a ``?`` not followed by that option is part of the path."""
    path, mark, query = text.rpartition("?")
    key, equals, runtime = query.partition("=")
    if not mark or key != "runtime" or not equals:
        return text, "node"
    if runtime not in RUNTIMES:
        raise CourseLayoutError(f"runtime={runtime!r}: use one of {', '.join(RUNTIMES)}")
    return path, runtime


def with_runtime(path: str, runtime: str) -> str:
    """The ``pi-course:`` target for ``path`` under ``runtime`` (the inverse of :func:`split_runtime`)."""
    return path if runtime == "node" else f"{path}?runtime={runtime}"


def find_runtime(runtime: str) -> str:
    """The executable the adapter runs under: Node.js (checked recent enough) or bun, from PATH."""
    if runtime == "node":
        return find_node()
    found = shutil.which(runtime)
    if found is None:
        raise CourseLayoutError(f"runtime={runtime} needs {runtime!r} on PATH, and none was found")
    return found


def pi_course_adapter(path_text: str, settings: ImplSettings) -> Adapter:
    """An adapter for the course project at ``path_text`` (``PATH[?runtime=bun]``; builds always use Node.js's npm)."""
    path_text, runtime = split_runtime(path_text)
    if not path_text:
        raise CourseLayoutError("needs a path: a course repository, its packages/pi-course, or a folder of built modules")
    path = Path(path_text).expanduser().resolve()
    if not path.is_dir():
        raise CourseLayoutError(f"{path_text!r} is not a folder")
    check_course_project(path)
    executable = find_runtime(runtime)
    try:
        isolation = choose_isolation(settings.sandbox)
    except SandboxUnavailable as error:
        raise CourseLayoutError(str(error)) from error
    built = BuildResult(None)
    if settings.build:
        built = build(path, settings)
        if built.report is not None:
            print(f"the build of {path} failed:\n{built.report}", file=sys.stderr)
            return FailedBuildAdapter(path.name, built.report, isolation)
    adapter = course_process_adapter(built.project(path), executable, isolation, settings)
    adapter.on_close.append(built.remove)  # the built copy lives as long as the adapter
    return adapter


def course_process_adapter(path: Path, node: str, isolation: Isolation, settings: ImplSettings) -> ProcessAdapter:
    """The adapter over the compiled modules of the (built) project at ``path``, run by ``node`` (Node.js or bun)."""
    modules = modules_dir(path)
    sandbox = None
    if isolation == "bwrap":
        # The adapter, the submission (read-only) and the Node.js runtime; nothing else of this machine.
        sandbox = Sandbox(read_only=(NODE_ADAPTER.parent, path, *runtime_roots([node])), chdir=package_dir(path))
    argv = confined_argv(node, NODE_ADAPTER, modules, [path], "pi-course")
    options = ProcessOptions.from_settings(argv, settings, cwd=package_dir(path), sandbox=sandbox)
    options.require_seal = True  # our adapter seals its lines: one the implementation forges is refused
    return ProcessAdapter(options, name=path.name)


#: What is weaker when an adapter runs under bun, which has no permission model (docs/isolation.md).
BUN_IS_WEAKER = (
    "{who}: runtime=bun has no permission model: the code under test may open an inspector, start processes and "
    "read any file the sandbox shows, so it can reach the adapter's seal; grade under Node.js ({supported}) for that protection"
)


def confined_argv(runtime: str, script: Path, argument: Path, readable: list[Path], who: str) -> list[str]:
    """The command line of a bundled adapter ``script`` run by ``runtime`` on ``argument``.

    Under Node.js the adapter runs under the permission model (:func:`.node_runtime.isolation_flags`),
    reading only its own folder and ``readable``; under bun, which has none, a line on stderr says
    what is weaker.
    """
    if Path(runtime).name.startswith("bun"):
        print(BUN_IS_WEAKER.format(who=who, supported=SUPPORTED_NODE), file=sys.stderr)
        return [runtime, str(script), str(argument)]
    roots = [script.parent, *readable]
    readable_roots = [*roots, *(Path(os.path.realpath(root)) for root in roots)]
    return [runtime, *isolation_flags(node_version(runtime, who), readable_roots), str(script), str(argument)]
