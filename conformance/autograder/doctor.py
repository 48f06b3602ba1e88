"""What ``pi-conformance doctor`` checks: is everything grading needs present on this machine?

Each check is one :class:`Check`: what was found, and when something is missing, the command
(or step) that fixes it. Grading needs Python, Node.js (``pi-course:`` projects), the pinned
toolchain (their compiler) and a working bubblewrap sandbox (student code is hostile; without
it ``--sandbox auto`` grades unconfined, with a warning). Resource limits are reported as the
kernel offers them, never required: the rlimits the grader sets work everywhere. Chromium is
optional: only the HTML reports' own tests drive it.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from conformance import __version__

_VERSION_TIMEOUT_S = 15
#: The Chromium executables the report tests can drive (Debian's first).
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FIX = "apt-get install -y chromium (only the HTML reports' own tests need it)"
NODE_FIX = "install Node.js {major}.x with npm (https://nodejs.org, or NodeSource's apt repository setup_{major}.x)"
#: Rlimits the grader can set on a student program (``--cpu-limit``, ``--memory-limit``) and
#: others worth seeing; each is shown with its current hard limit.


@dataclass(frozen=True)
class Check:
    """One line of the doctor's screen."""

    name: str
    ok: bool
    #: What was found (a version, a path, a state), or what is wrong.
    found: str
    #: The command or step that fixes it; None when nothing needs fixing.
    fix: str | None = None
    #: False for what grading can do without (Chromium, cgroups).
    required: bool = True


def _version_of(argv: list[str]) -> str:
    """The first line ``argv`` prints (``node --version``), or '' when it cannot run."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=_VERSION_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = (result.stdout or result.stderr).strip().splitlines()
    return lines[0].strip() if lines and result.returncode == 0 else ""


def check_python() -> Check:
    """The interpreter running pi-conformance."""
    found = f"{platform.python_version()} ({sys.executable}); pi-conformance {__version__}"
    return Check("Python", sys.version_info >= (3, 11), found, None if sys.version_info >= (3, 11) else "install Python 3.11+")


def check_node() -> Check:
    """Node.js and npm, against the version the ``pi-course:`` adapter requires."""
    from conformance.toolchain import node_versions

    fix = NODE_FIX.format(major=node_versions.INSTALL_MAJOR)
    required = f"required: {node_versions.supported_text()}, the course's floor: {node_versions.floor_text()}+"
    node = shutil.which("node")
    if node is None:
        return Check("Node.js", False, f"not found on PATH ({required})", fix)
    version = _version_of([node, "--version"])
    if not node_versions.supported(version):
        why = "other releases lack the permission model that confines student code"
        return Check("Node.js", False, f"{version or 'unknown version'} at {node}; needs {node_versions.supported_text()} ({why})", fix)
    npm = shutil.which("npm")
    npm_version = _version_of([npm, "--version"]) if npm else ""
    if not npm_version:
        return Check("Node.js", False, f"{version} at {node} ({required}), but npm is missing", fix)
    if node_versions.below_course_floor(version):
        note = f"; grades, but older than the course's {node_versions.floor_text()}: a project using newer Node.js APIs may fail here"
        return Check("Node.js", True, f"{version} at {node} ({required}), npm {npm_version}{note}")
    return Check("Node.js", True, f"{version} at {node} ({required}), npm {npm_version}")


def check_toolchain() -> Check:
    """The pinned compiler set that builds students' projects."""
    from conformance import toolchain

    status = toolchain.status()
    if status.installed and status.problem is None:
        versions = ", ".join(f"{name} {version}" for name, version in status.versions.items())
        return Check("toolchain", True, f"{versions} in {status.folder}")
    # The problem ends by naming the command, which the fix line shows anyway.
    found = (status.problem or f"not installed in {status.folder}").split(f": run `{toolchain.INSTALL_COMMAND}`")[0]
    return Check("toolchain", False, found, toolchain.INSTALL_COMMAND)


def check_sandbox(probe: Callable[[], str | None] | None = None) -> Check:
    """bubblewrap, and whether it really sandboxes a program here (a trial run)."""
    from conformance.isolation import sandbox

    reason = (probe or sandbox.probe)()
    if reason is None:
        return Check("sandbox", True, f"bubblewrap works here ({sandbox.find_bwrap()}); student code runs as uid {sandbox.SANDBOX_UID}")
    if sandbox.find_bwrap() is None:
        fix = sandbox.INSTALL_HINT
    else:
        fix = (
            "allow unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1, or "
            "kernel.apparmor_restrict_unprivileged_userns=0; in a container: --security-opt seccomp=unconfined), "
            "or grade knowingly unconfined with --sandbox none"
        )
    return Check("sandbox", False, reason, fix)


def check_limits() -> Check:
    """The per-submission resource limits as grading would apply them here, and by what mechanism.

    The same words every report uses (:func:`conformance.isolation.limits.describe`). Never
    required: without a writable cgroup the limits fall back to per-process rlimits, which the
    line says.
    """
    from conformance.isolation import limits, sandbox

    defaults = limits.Limits()
    found = limits.describe(defaults, tmpfs_capped=sandbox.probe() is None)
    fallback = found.startswith("rlimits only")
    fix = "give the grader a writable cgroup (cgroup v2: a delegated subtree, e.g. systemd-run --user --scope -p Delegate=yes)"
    return Check("limits", not fallback, found, fix if fallback else None, required=False)


def check_chromium() -> Check:
    """Headless Chromium, which the HTML reports' tests drive (optional for grading)."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return Check("Chromium", True, found, required=False)
    return Check("Chromium", False, "not found (optional: only the HTML reports' tests need it)", CHROMIUM_FIX, required=False)


def run_checks() -> list[Check]:
    """Every check, in the order the screen shows them."""
    return [check_python(), check_node(), check_toolchain(), check_sandbox(), check_limits(), check_chromium()]


def ready(checks: list[Check]) -> bool:
    """True when every check grading needs passed."""
    return all(check.ok for check in checks if check.required)


def render(checks: list[Check]) -> str:
    """The doctor's screen: one line per check, its fix indented under it."""
    width = max(len(check.name) for check in checks)
    lines = []
    for check in checks:
        mark = "ok" if check.ok else ("MISSING" if check.required else "missing")
        lines.append(f"{mark:<8}{check.name:<{width}}  {check.found}")
        if check.fix and not check.ok:
            lines.append(f"{'':<8}{'':<{width}}  fix: {check.fix}")
    verdict = "ready to grade" if ready(checks) else "NOT ready to grade: fix the MISSING lines above"
    return "\n".join([*lines, "", f"pi-conformance doctor: {verdict}"]) + "\n"
