"""Build a course project in a throwaway copy, with the pinned toolchain, and never in the submission.

The submission is copied into a fresh workspace (:mod:`.submission_copy`: regular files,
folders and links that stay inside the copy; never ``.git``, never ``node_modules``, never
past the caps). Nothing the build does can therefore reach the submission's git
configuration or hooks (a build that set ``core.fsmonitor`` would otherwise run its command
in the staff's next ``git status``), and nothing it writes stays on disk once the workspace
is removed after grading.

**The grader decides how it is built** (:mod:`.staff_build`, the rubric's ``build:``): the
staff files replace the submission's in the copy, and the command is the grader's, by
default the pinned ``tsc -p tsconfig.json`` started directly (no script of the submission's
runs); ``npm-run-build`` runs the pinned ``package.json``'s script in the sandbox instead.

**Every submission is compiled alike,** by the pinned toolchain (:mod:`conformance.toolchain`):
the workspace's own ``node_modules`` is a link to it, so ``tsc`` is found on the path npm
builds for a script, and ``@types/node`` where TypeScript looks for type packages (in the
``node_modules`` of every folder above the project).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from conformance import toolchain
from conformance.adapters.settings import ImplSettings
from conformance.common.student_text import path_text
from conformance.isolation import build_disk
from conformance.isolation.confine import SESSION_MARKER, minimal_environment, stop_tree, supervisor_argv
from conformance.isolation.sandbox import (
    SANDBOX_HOME,
    Sandbox,
    SandboxUnavailable,
    bwrap_command,
    choose_isolation,
    find_bwrap,
    runtime_path,
    runtime_roots,
)
from conformance.isolation.staff_build import StaffBuild, has_typescript_sources, pin_files
from conformance.isolation.submission_copy import SubmissionTooLarge, chown_tree, copy_submission, remove_tree
from conformance.isolation.supervisor import descendants

#: A registry address nothing listens on (the discard port of the loopback).
UNREACHABLE_REGISTRY = "http://127.0.0.1:9/"
BUILD_TIMEOUT_S = 300
#: What a build may write in all (its workspace, the submission's copy included, and its log), and how often that is measured.
MAX_BUILD_DISK_BYTES = 1024 * 1024 * 1024
MAX_BUILD_ENTRIES = 100_000
DISK_POLL_S = 0.25
#: The build log is read from its end only: a build that prints gigabytes costs the grader this much.
LOG_TAIL_BYTES = 64 * 1024
OUTPUT_LIMIT_CHARS = 6000


@dataclass
class Workspace:
    """A throwaway folder holding the copy of one submission; :meth:`remove` deletes it all."""

    root: Path
    #: The copy of the submission (same folder name as the original).
    project: Path
    #: ``root`` is a size-capped tmpfs of its own (:mod:`.build_disk`), unmounted on removal.
    capped: bool = False

    @property
    def home(self) -> Path:
        """The build's fresh home and temporary folder, outside the copy."""
        return self.root / ".home"

    def remove(self) -> None:
        """Delete the workspace and everything the build wrote, however deep (idempotent, never raises)."""
        if self.capped:
            build_disk.unmount(self.root)
        remove_tree(self.root)


@dataclass
class BuildResult:
    """How a build went: the failure report (None when it built), and the copy to grade."""

    report: str | None
    #: The built copy; None when nothing was built (no ``package.json``: the submission is graded as it is).
    workspace: Workspace | None = None

    def project(self, original: Path) -> Path:
        """The folder to grade: the built copy, or ``original`` when nothing was built."""
        return self.workspace.project if self.workspace is not None else original

    def remove(self) -> None:
        """Delete the workspace, if any."""
        if self.workspace is not None:
            self.workspace.remove()


#: Every build root's name starts with this, then the grading process's pid.
BUILD_ROOT_PREFIX = "pi-build-"


def copy_name(name: str) -> str:
    """A folder name for the copy of a submission named ``name``: safe for npm and Node's module URLs."""
    return re.sub(r"[^\w.-]", "_", path_text(name)).lstrip(".") or "submission"


def build_environment(home: str, node: str, tools: toolchain.ToolchainStatus) -> dict[str, str]:
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
            "PATH": runtime_path([str(tools.bin / "tsc"), node]),
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


def read_tail(log: Path) -> str:
    """The end of the build log (at most :data:`LOG_TAIL_BYTES` read), decoded leniently."""
    with log.open("rb") as file:
        size = file.seek(0, os.SEEK_END)
        file.seek(max(0, size - LOG_TAIL_BYTES))
        data = file.read(LOG_TAIL_BYTES)
    text = data.decode("utf-8", errors="replace").strip()
    truncated = size > LOG_TAIL_BYTES or len(text) > OUTPUT_LIMIT_CHARS
    return "…" + text[-OUTPUT_LIMIT_CHARS:] if truncated else text


def build_in_copy(project: Path, where: Path, node: str, settings: ImplSettings) -> BuildResult:
    """Copy ``project`` into a workspace, pin the staff files and run the grader's build command in the copy of ``where``.

    ``where`` is the package folder, inside ``project``; the staff files and the command are
    ``settings.staff_build`` (:mod:`.staff_build`). The workspace is removed here when the
    build fails; otherwise the caller removes it once the copy has been graded
    (:meth:`BuildResult.remove`).
    """
    staff = settings.staff_build
    label = build_label(staff)
    try:
        tools = toolchain.require()
        isolation = choose_isolation(settings.sandbox)
    except (toolchain.ToolchainMissing, SandboxUnavailable) as error:
        return BuildResult(f"{label} could not run: {error}")
    # The grader's pid in the name: a build root whose grader was killed (SIGKILL, a lost
    # terminal) is found and unmounted by the next build, instead of staying mounted for ever.
    build_disk.unmount_abandoned(Path(settings.build_root or tempfile.gettempdir()), BUILD_ROOT_PREFIX)
    root = Path(tempfile.mkdtemp(prefix=f"{BUILD_ROOT_PREFIX}{os.getpid()}-", dir=settings.build_root))
    # Mounted before the copy: everything in the workspace, deleted files included, counts against the cap.
    capped = build_disk.mount_capped(root, build_disk.tmpfs_size(MAX_BUILD_DISK_BYTES), build_disk.tmpfs_size(MAX_BUILD_ENTRIES))
    # The copy's name is the original's with only letters, digits, "-", "_" and ".": npm
    # cannot read a package.json whose path is not UTF-8, nor Node import a module whose path
    # holds a backslash. Reports name the submission by its own folder, never by the copy.
    workspace = Workspace(root, root / copy_name(project.name), capped)
    package = workspace.project / where.relative_to(project)
    try:
        try:
            copy_submission(project, workspace.project)
            pin_files(package, staff)
        except SubmissionTooLarge as error:
            report: str | None = f"the submission is too large to build: {error} (node_modules and .git are not copied)"
        except (OSError, RecursionError) as error:
            report = f"the submission cannot be copied to build it: {path_text(str(error))}"
        else:
            (root / "node_modules").symlink_to(tools.node_modules, target_is_directory=True)
            workspace.home.mkdir()
            if settings.run_as is not None:
                chown_tree(root, *settings.run_as)
            command = _command(staff, package, node, tools)
            report = None if command is None else _run_build(workspace, package, command, label, node, tools, settings, isolation)
    except BaseException:
        workspace.remove()
        raise
    if report is not None:
        workspace.remove()
        return BuildResult(report)
    return BuildResult(None, workspace)


def build_label(staff: StaffBuild) -> str:
    """How reports name the build command: ``tsc -p tsconfig.json`` or ``npm run build``."""
    return "tsc -p tsconfig.json" if staff.command == "tsc" else "npm run build"


def _command(staff: StaffBuild, package: Path, node: str, tools: toolchain.ToolchainStatus) -> list[str] | None:
    """The grader's build command; None when there is nothing to compile (no TypeScript in ``src/``)."""
    if staff.command == "npm-run-build":
        return [shutil.which("npm") or "npm", "run", "build"]
    if not has_typescript_sources(package):
        return None
    # The compiler's own script, started by node: neither npm nor any script of the submission's runs.
    return [node, os.path.realpath(tools.bin / "tsc"), "-p", "tsconfig.json"]


def _run_build(
    workspace: Workspace,
    where: Path,
    command: list[str],
    label: str,
    node: str,
    tools: toolchain.ToolchainStatus,
    settings: ImplSettings,
    isolation: str,
) -> str | None:
    env = build_environment(SANDBOX_HOME if isolation == "bwrap" else str(workspace.home), node, tools)
    limits = settings.resource_limits().for_build()
    if isolation == "bwrap":
        sandbox = Sandbox(read_only=(tools.folder, *runtime_roots([node, command[0]])), writable=(workspace.root,), chdir=where)
        command = bwrap_command(sandbox, command, find_bwrap() or "bwrap", limits.tmp_mb)
    marker = secrets.token_hex(16)
    env[SESSION_MARKER] = marker
    # The log lives outside the workspace, so the build cannot reach it through its folder.
    with tempfile.TemporaryDirectory(prefix="pi-build-log-", dir=settings.build_root) as logs:
        log = Path(logs) / "build.log"
        with log.open("wb") as output:
            try:
                # Output to a file, not a pipe: a stray process that keeps it open cannot stall the grader.
                process = subprocess.Popen(
                    supervisor_argv(command, limits, settings.run_as),
                    cwd=where,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as error:
                return f"{label} could not run: {error}"
            try:
                code, overflow = _watch(process, workspace, log)
            finally:
                stop_tree(process, marker)
        output_text = read_tail(log)
    if overflow is not None:
        return f"{label} was stopped: {overflow}:\n{output_text}"
    if code == 0:
        return None
    if code is None:
        return f"{label} did not finish within {BUILD_TIMEOUT_S} s:\n{output_text}"
    return f"{label} exited with status {code}:\n{output_text}"


def _watch(process: subprocess.Popen[bytes], workspace: Workspace, log: Path) -> tuple[int | None, str | None]:
    """Wait for the build; its exit status (None: out of time) and why it was stopped early, if it was.

    Every :data:`DISK_POLL_S` what it wrote (its workspace and its log) is measured, files it
    deleted but holds open included (:mod:`.build_disk`): a build that writes more than
    :data:`MAX_BUILD_DISK_BYTES` in all, or more than :data:`MAX_BUILD_ENTRIES` files, is
    stopped. On a capped workspace the kernel refuses writes past the cap; elsewhere the host's
    disk is bounded by the cap plus what it can write in one poll (each file is also capped by
    the file-size limit).
    """
    deadline = time.monotonic() + BUILD_TIMEOUT_S
    while True:
        try:
            code: int | None = process.wait(timeout=DISK_POLL_S)
        except subprocess.TimeoutExpired:
            code = None
        # Measured once more after it exits: a build that hit the capped tmpfs's end failed of ENOSPC, and the cap is why.
        overflow = _overflow(process, workspace, log)
        if overflow is not None or code is not None:
            return code, overflow
        if time.monotonic() > deadline:
            return None, None


def _overflow(process: subprocess.Popen[bytes], workspace: Workspace, log: Path) -> str | None:
    """Why the build is over its disk cap (what it wrote, deleted files it holds open included), or None."""
    size, entries = disk_use([workspace.root, log], MAX_BUILD_ENTRIES)
    if workspace.capped:
        size = max(size, build_disk.used_bytes(workspace.root))
    else:
        size += build_disk.open_deleted_bytes([process.pid, *descendants(process.pid)])
    if size <= MAX_BUILD_DISK_BYTES and entries <= MAX_BUILD_ENTRIES:
        return None
    what = f"more than {MAX_BUILD_ENTRIES} files" if entries > MAX_BUILD_ENTRIES else f"more than {MAX_BUILD_DISK_BYTES >> 20} MiB"
    return f"it wrote {what} (the build's disk cap)"


def disk_use(paths: list[Path], max_entries: int) -> tuple[int, int]:
    """Bytes and entries under ``paths`` (links not followed), counting stops past ``max_entries``."""
    size = entries = 0
    pending = [str(path) for path in paths]
    while pending and entries <= max_entries:
        path = pending.pop()
        try:
            info = os.lstat(path)
        except OSError:
            continue
        entries += 1
        if stat.S_ISDIR(info.st_mode):
            try:
                pending += [os.path.join(path, name) for name in os.listdir(path)]
            except OSError:
                continue
        else:
            size += info.st_blocks * 512
    return size, entries
