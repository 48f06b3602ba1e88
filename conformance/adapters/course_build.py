"""Build a course project in a throwaway copy, with the pinned toolchain, and never in the submission.

The submission is copied into a fresh workspace: regular files, folders and symbolic links
(recreated, never followed), without ``.git`` and without any ``node_modules``. Nothing the
build does can therefore reach the submission's git configuration or hooks (a build that
set ``core.fsmonitor`` would otherwise run its command in the staff's next ``git status``),
and nothing it writes stays on disk once the workspace is removed after grading.

**Every submission is compiled alike,** by the pinned toolchain (:mod:`conformance.toolchain`):
the workspace's own ``node_modules`` is a link to it, so ``tsc`` is found on the path npm
builds for the script, and ``@types/node`` where TypeScript looks for type packages (in the
``node_modules`` of every folder above the project). A submission's own ``node_modules``
(another TypeScript, a patched compiler) is never copied, so none of it runs. The build
script itself is the student's and runs in the sandbox.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from conformance import toolchain
from conformance.adapters import build_disk
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
from conformance.adapters.session import SESSION_MARKER, minimal_environment, stop_tree, supervisor_argv
from conformance.adapters.settings import ImplSettings
from conformance.adapters.supervisor import descendants

#: A registry address nothing listens on (the discard port of the loopback).
UNREACHABLE_REGISTRY = "http://127.0.0.1:9/"
BUILD_TIMEOUT_S = 300
#: Folders never copied into the workspace: the submission's repository and its installed packages.
SKIPPED_FOLDERS = frozenset({".git", "node_modules"})
#: A submission larger than this (without ``.git`` and ``node_modules``) is not built.
MAX_COPY_BYTES = 256 * 1024 * 1024
MAX_COPY_ENTRIES = 20_000
#: What a build may write in all (its workspace, the submission's copy included, and its log), and how often that is measured.
MAX_BUILD_DISK_BYTES = 1024 * 1024 * 1024
MAX_BUILD_ENTRIES = 100_000
DISK_POLL_S = 0.25
#: The build log is read from its end only: a build that prints gigabytes costs the grader this much.
LOG_TAIL_BYTES = 64 * 1024
OUTPUT_LIMIT_CHARS = 6000


class SubmissionTooLarge(RuntimeError):
    """The submission exceeds :data:`MAX_COPY_BYTES` or :data:`MAX_COPY_ENTRIES`."""


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
        """Delete the workspace and everything the build wrote (idempotent)."""
        if self.capped:
            build_disk.unmount(self.root)
        shutil.rmtree(self.root, ignore_errors=True)


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


def copy_submission(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` without ``.git``/``node_modules``, never following a link.

    Links are recreated as they are (what they point at is not copied); sockets, pipes and
    devices are left out. :class:`SubmissionTooLarge` past the caps.
    """
    budget = [MAX_COPY_BYTES, MAX_COPY_ENTRIES]

    def walk(folder: Path, into: Path) -> None:
        into.mkdir(mode=0o755)
        with os.scandir(folder) as entries:
            for entry in entries:
                budget[1] -= 1
                if budget[1] < 0:
                    raise SubmissionTooLarge(f"more than {MAX_COPY_ENTRIES} files")
                destination = into / entry.name
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    os.symlink(os.readlink(entry.path), destination)
                elif stat.S_ISDIR(info.st_mode):
                    if entry.name not in SKIPPED_FOLDERS:
                        walk(Path(entry.path), destination)
                elif stat.S_ISREG(info.st_mode):
                    budget[0] -= info.st_size
                    if budget[0] < 0:
                        raise SubmissionTooLarge(f"more than {MAX_COPY_BYTES // (1024 * 1024)} MiB")
                    shutil.copyfile(entry.path, destination, follow_symlinks=False)
                    os.chmod(destination, 0o755 if info.st_mode & 0o111 else 0o644)

    walk(source, target)


def chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give ``root`` and everything under it (links themselves, not their targets) to ``uid``:``gid``."""
    os.chown(root, uid, gid, follow_symlinks=False)
    for folder, folders, files in os.walk(root):
        for name in (*folders, *files):
            os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)


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
    """Copy ``project`` into a workspace and run ``npm run build`` in the copy of ``where``.

    ``where`` is the folder of the ``package.json`` to build, inside ``project``. The
    workspace is removed here when the build fails; otherwise the caller removes it once
    the copy has been graded (:meth:`BuildResult.remove`).
    """
    try:
        tools = toolchain.require()
        isolation = choose_isolation(settings.sandbox)
    except (toolchain.ToolchainMissing, SandboxUnavailable) as error:
        return BuildResult(f"npm run build could not run: {error}")
    root = Path(tempfile.mkdtemp(prefix="pi-build-", dir=settings.build_root))
    # Mounted before the copy: everything in the workspace, deleted files included, counts against the cap.
    capped = build_disk.mount_capped(root, build_disk.tmpfs_size(MAX_BUILD_DISK_BYTES), build_disk.tmpfs_size(MAX_BUILD_ENTRIES))
    workspace = Workspace(root, root / project.name, capped)
    try:
        try:
            copy_submission(project, workspace.project)
        except SubmissionTooLarge as error:
            report: str | None = f"the submission is too large to build: {error} (node_modules and .git are not copied)"
        else:
            (root / "node_modules").symlink_to(tools.node_modules, target_is_directory=True)
            workspace.home.mkdir()
            if settings.run_as is not None:
                chown_tree(root, *settings.run_as)
            report = _run_build(workspace, workspace.project / where.relative_to(project), node, tools, settings, isolation)
    except BaseException:
        workspace.remove()
        raise
    if report is not None:
        workspace.remove()
        return BuildResult(report)
    return BuildResult(None, workspace)


def _run_build(
    workspace: Workspace, where: Path, node: str, tools: toolchain.ToolchainStatus, settings: ImplSettings, isolation: str
) -> str | None:
    npm = shutil.which("npm") or "npm"
    command = [npm, "run", "build"]
    env = build_environment(SANDBOX_HOME if isolation == "bwrap" else str(workspace.home), node, tools)
    limits = settings.resource_limits().for_build()
    if isolation == "bwrap":
        sandbox = Sandbox(read_only=(tools.folder, *runtime_roots([node, npm])), writable=(workspace.root,), chdir=where)
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
                return f"npm run build could not run: {error}"
            try:
                code, overflow = _watch(process, workspace, log)
            finally:
                stop_tree(process, marker)
        output_text = read_tail(log)
    if overflow is not None:
        return f"npm run build was stopped: {overflow}:\n{output_text}"
    if code == 0:
        return None
    if code is None:
        return f"npm run build did not finish within {BUILD_TIMEOUT_S} s:\n{output_text}"
    return f"npm run build exited with status {code}:\n{output_text}"


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
