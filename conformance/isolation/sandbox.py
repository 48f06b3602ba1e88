"""The sandbox for student programs: the ``bwrap`` (bubblewrap) command line, and whether it works here.

A sandboxed program runs as an unprivileged user (uid and gid 65534) in fresh user, mount,
PID, network, IPC, UTS and cgroup namespaces, in its own session, and dies with its parent.
Its file system holds only what :class:`Sandbox` lists, plus the runtime (``/usr``, the
``/lib*`` and ``/bin`` links, a few files of ``/etc``, read-only), a fresh ``/proc`` and
``/dev``, and a private tmpfs ``/tmp`` that is also its home. Everything else (the
fixtures, the grader's virtualenv and code, other submissions, the output folder, the
grader's own ``/proc``) does not exist for it. With no network, nothing can be fetched.

Paths keep their absolute names inside, so messages that name a file read the same with
and without the sandbox.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from conformance.isolation.limits import DEFAULT_TMP_MB, MIB

SandboxMode = Literal["auto", "bwrap", "none"]
Isolation = Literal["bwrap", "none"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "bwrap", "none")
#: The unprivileged user and group a sandboxed program runs as ("nobody").
SANDBOX_UID = 65534
#: The home and temporary folder inside the sandbox (a private tmpfs).
SANDBOX_HOME = "/tmp"
INSTALL_HINT = "apt-get install -y bubblewrap"
_RUNTIME_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Enough of /etc for the dynamic linker, TLS roots, time zones and user names; no secrets.
_ETC_FILES = (
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
)
_PROBE_TIMEOUT_S = 20


class SandboxUnavailable(RuntimeError):
    """``--sandbox bwrap`` was asked for and bubblewrap does not work here."""


@dataclass(frozen=True)
class Sandbox:
    """What one sandboxed program may see besides the runtime: paths keep their names inside."""

    read_only: tuple[Path, ...] = ()
    #: Bound read-write (a build's project folder, and nothing else ever).
    writable: tuple[Path, ...] = ()
    #: The working folder inside (created empty when no bound path holds it).
    chdir: Path | None = None


def find_bwrap() -> str | None:
    """The ``bwrap`` executable, if installed."""
    return shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap", "/bin/bwrap") if os.access(p, os.X_OK)), None)


def runtime_path(executables: Iterable[str]) -> str:
    """``PATH`` inside the sandbox: the folders of ``executables``, then the system's."""
    folders = [str(Path(executable).parent) for executable in executables]
    return ":".join(dict.fromkeys([*folders, "/usr/local/bin", "/usr/bin", "/bin"]))


def runtime_roots(executables: Iterable[str]) -> list[Path]:
    """Install prefixes of ``executables`` that lie outside ``/usr`` (a Node.js under /opt, say)."""
    roots: list[Path] = []
    for executable in executables:
        for candidate in (Path(executable), Path(os.path.realpath(executable))):
            if not _under(candidate, [Path(d) for d in _RUNTIME_DIRS]):
                # .../prefix/bin/node -> .../prefix: the runtime's libraries live next to its bin/.
                roots.append(candidate.parent.parent if candidate.parent.name == "bin" else candidate.parent)
    return roots


def _under(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def bwrap_command(sandbox: Sandbox, argv: Sequence[str], bwrap: str = "bwrap", tmp_size_mb: int | None = DEFAULT_TMP_MB) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` inside ``sandbox``.

    The private ``/tmp`` holds at most ``tmp_size_mb`` MiB (None: half the machine's memory,
    the kernel's default) when this bubblewrap knows ``--size`` (0.8.0 and later); its pages
    count against the program's memory cgroup either way.
    """
    command = [
        bwrap,
        "--unshare-all",  # user, mount, PID, network, IPC, UTS, cgroup
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--hostname",
        "pi-sandbox",
        "--die-with-parent",
        "--new-session",  # no controlling terminal: nothing can be typed into the grader's
        "--cap-drop",
        "ALL",
        *_system_binds(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    if tmp_size_mb is not None and tmpfs_size_supported(bwrap):
        command += ["--size", str(tmp_size_mb * MIB)]  # must come right before the --tmpfs it sizes
    command += ["--tmpfs", SANDBOX_HOME, *_sandbox_binds(sandbox)]
    return [*command, "--", *argv]


def _system_binds() -> list[str]:
    """The runtime's folders (or their symlinks) and the few files of /etc a program needs, read-only."""
    binds: list[str] = []
    for folder in _RUNTIME_DIRS:
        if os.path.islink(folder):
            binds += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            binds += ["--ro-bind", folder, folder]
    for file in _ETC_FILES:
        if os.path.exists(file):
            binds += ["--ro-bind", file, file]
    return binds


def _sandbox_binds(sandbox: Sandbox) -> list[str]:
    """The sandbox's own folders, and the folder the program starts in."""
    binds: list[str] = []
    bound = [*sandbox.writable, *sandbox.read_only]
    if sandbox.chdir is not None and not _under(sandbox.chdir, bound):
        binds += ["--dir", str(sandbox.chdir)]
    # Read-only first, writable last: a build's project stays writable even inside a read-only parent.
    for path in _distinct(sandbox.read_only):
        binds += ["--ro-bind", str(path), str(path)]
    for path in _distinct(sandbox.writable):
        binds += ["--bind", str(path), str(path)]
    if sandbox.chdir is not None:
        binds += ["--chdir", str(sandbox.chdir)]
    return binds


def _distinct(paths: Iterable[Path]) -> list[Path]:
    """Existing paths, without repeats and without those another one already holds."""
    existing = sorted({path for path in paths if path.exists()}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in existing:
        if not _under(path, kept):
            kept.append(path)
    return kept


@functools.cache
def tmpfs_size_supported(bwrap: str | None = None) -> bool:
    """Whether this bubblewrap can cap a tmpfs's size (``--size``, bubblewrap 0.8.0 and later)."""
    bwrap = bwrap if bwrap and os.path.isabs(bwrap) else find_bwrap()
    if bwrap is None:
        return False
    try:
        result = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in result.stdout + result.stderr


@functools.cache
def probe() -> str | None:
    """Why bubblewrap cannot sandbox a program here, or None when it can (checked once)."""
    bwrap = find_bwrap()
    if bwrap is None:
        return f"bwrap is not installed ({INSTALL_HINT})"
    true = shutil.which("true") or "/usr/bin/true"
    try:
        result = subprocess.run(
            bwrap_command(Sandbox(), [true], bwrap), capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not run: {error}"
    if result.returncode != 0:
        return f"bwrap does not work here (user namespaces disabled?): {result.stderr.strip() or f'exit status {result.returncode}'}"
    return None


_warned = False


def staff_notice(reason: str) -> str:
    """The warning ``--sandbox auto`` prints when bwrap cannot run: a grading host's risk, in staff's words."""
    return (
        f"pi-conformance: WARNING: student code runs WITHOUT a sandbox: {reason}. It can read the fixtures, "
        f"kill the grader and see other submissions. Install bubblewrap ({INSTALL_HINT}) or pass --sandbox none "
        "to silence this warning."
    )


_notice: Callable[[str], str] = staff_notice


def use_notice(notice: Callable[[str], str]) -> None:
    """Say the no-sandbox warning with ``notice(reason)`` instead (``check`` speaks to a student on their own machine)."""
    global _notice
    _notice = notice


def choose_isolation(mode: SandboxMode) -> Isolation:
    """The isolation to use for ``--sandbox MODE``.

    ``auto`` means bwrap when it works here, else none with a loud warning on stderr (once
    per process); ``bwrap`` when it does not work raises :class:`SandboxUnavailable`.
    """
    global _warned
    if mode == "none":
        return "none"
    reason = probe()
    if reason is None:
        return "bwrap"
    if mode == "bwrap":
        raise SandboxUnavailable(f"--sandbox bwrap: {reason}")
    if not _warned:
        _warned = True
        print(_notice(reason), file=sys.stderr)
    return "none"


def command_sandbox(argv: Sequence[str], env: dict[str, str], cwd: Path | None = None) -> Sandbox:
    """What a ``cmd:`` program sees: what its command line names, read-only.

        That is the program itself (a virtualenv's interpreter brings its virtualenv and the
        folders of its editable installs; a script its folder, and the interpreter of its ``#!``
        line), the folder of every argument that
        is an existing file, every argument that is an existing folder, and the absolute paths
        in ``--env`` values (``PYTHONPATH=...``; an executable there, such as an interpreter, brings
    what it needs to run, like the program). The working folder keeps its name but shows
        only those. Nothing else of the grader's machine is visible.
    """
    where = cwd or Path.cwd()
    seen: list[Path] = []
    program = Path(os.path.abspath(where / argv[0]))
    seen += runtime_roots([str(program)])
    if program.parent.name == "bin":
        seen += virtualenv(program.parent.parent)
    seen += _interpreter_of(program)
    for argument in argv[1:]:
        candidate = where / argument
        if argument and candidate.exists():
            seen.append(candidate.resolve() if candidate.is_dir() else candidate.resolve().parent)
            seen += _interpreter_of(candidate)
    for value in env.values():
        for part in value.split(os.pathsep):
            path = Path(part)
            if not part.startswith("/") or not path.exists():
                continue
            seen.append(path)
            if path.is_file() and os.access(path, os.X_OK):
                # An interpreter passed in the environment (PYEXE=.venv/bin/python) runs like the program.
                seen += runtime_roots([part])
                if path.parent.name == "bin":
                    seen += virtualenv(path.parent.parent)
    return Sandbox(read_only=tuple(seen), chdir=where)


def _interpreter_of(script: Path) -> list[Path]:
    """The interpreter a ``#!`` line names, when it lies outside the runtime (a virtualenv's python)."""
    try:
        with script.open("rb") as file:
            first = file.readline(256)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode(errors="replace").split()
    if not words:
        return []
    interpreter = Path(words[0])
    return [*runtime_roots([str(interpreter)]), *virtualenv(interpreter.parent.parent)]


def virtualenv(folder: Path) -> list[Path]:
    """A virtualenv and the folders its ``.pth`` files add (editable installs); nothing if ``folder`` is none."""
    if not (folder / "pyvenv.cfg").is_file():
        return []
    found = [folder]
    for pth in folder.glob("lib/python*/site-packages/*.pth"):
        try:
            lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        found += [Path(line) for line in lines if line.startswith("/") and Path(line).is_dir()]
    return found
