"""Per-submission resource limits (``conformance/isolation/limits.py``): drills and the description.

The fork bomb and the memory hog run inside a test cgroup with a low cap of its own, so the
machine is never at risk even when the limits under test fail: the supervisor creates the
program's group below it. They skip, with the reason, where no cgroup can be written.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.isolation import budget, limits, sandbox
from conformance.isolation.confine import SUPERVISOR
from conformance.isolation.limits import MIB, CgroupSupport, Limits, describe, detect_from, empty_and_remove, supervisor_flags
from tests.support.attack_projects import CORRECT, append_to_module
from tests.support.batch_helpers import cli_env, rows
from tests.support.grading_batch import patched_copy
from tests.support.paths import REPO
from tests.support.requirements import costly, needs_bwrap, needs_node, require

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="resource limits use Linux cgroups, rlimits and /proc")

#: The caps of the test's own cgroup: what the machine risks at worst.
TEST_MEMORY = 1024 * MIB
TEST_PIDS = 400


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as file:
        file.write(text)


@dataclass(frozen=True)
class CappedGroup:
    """The test's own cgroup: where the supervisor runs (``join``), and the parents of the programs' groups."""

    support: CgroupSupport
    #: The ``cgroup.procs`` files the supervisor enters before it starts.
    join: tuple[str, ...]


@pytest.fixture
def test_cgroup() -> Iterator[CappedGroup]:
    """A cgroup of the test's own (1 GiB, 400 processes) under the grader's: whatever the limits under test
    do, the supervisor and everything below it stay inside these caps."""
    support = limits.detect()
    if support.mechanism == "none":
        pytest.skip(f"no cgroup can be written here: {support.reason}")
    made: list[tuple[limits.GroupKind, str]] = []
    join: list[str] = []
    try:
        for kind, parent in support.parents:
            folder = os.path.join(parent, f"pi-test-{secrets.token_hex(4)}")
            os.mkdir(folder)
            made.append((kind, folder))
            if kind == "memory":
                _write(f"{folder}/memory.limit_in_bytes", str(TEST_MEMORY))
            elif kind == "pids":
                _write(f"{folder}/pids.max", str(TEST_PIDS))
            else:
                _write(f"{folder}/memory.max", str(TEST_MEMORY))
                _write(f"{folder}/pids.max", str(TEST_PIDS))
                _write(f"{folder}/cgroup.subtree_control", "+memory +pids")
                # cgroup v2 keeps processes out of a group whose children share its controllers: a leaf for them.
                os.mkdir(f"{folder}/runner")
                join.append(f"{folder}/runner/cgroup.procs")
                continue
            join.append(f"{folder}/cgroup.procs")
    except OSError as error:
        for _, folder in reversed(made):
            empty_and_remove(f"{folder}/runner")
            empty_and_remove(folder)
        pytest.skip(f"the test's cgroup cannot be made: {error}")
    yield CappedGroup(CgroupSupport(support.mechanism, tuple(made)), tuple(join))
    for _, folder in made:
        empty_and_remove(f"{folder}/runner")
        assert not [path for path in Path(folder).iterdir() if path.is_dir()], "a program's cgroup was left behind"
        assert empty_and_remove(folder)


# Enters the test's cgroup, then becomes the supervisor.
_JOIN = 'for file in $PI_TEST_JOIN; do echo $$ > "$file" || exit 99; done; exec "$@"'


def supervise(
    program: list[str], limits_: Limits, support: CgroupSupport, join: tuple[str, ...] = (), timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``program`` under the supervisor with ``limits_``, its groups made under ``support``'s parents,
    the supervisor itself in the cgroups whose ``cgroup.procs`` files ``join`` names."""
    command = [sys.executable, "-I", "-S", str(SUPERVISOR), *supervisor_flags(limits_, support), *program]
    env = {**os.environ, "PI_TEST_JOIN": " ".join(join)}
    return subprocess.run(
        ["/bin/sh", "-c", _JOIN, "sh", *command], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env
    )


FORK_BOMB = """
import os, time
started = 0
for _ in range(1000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    started += 1
print(started, flush=True)
"""


def test_a_fork_bomb_gets_its_own_process_limit_and_nothing_survives(test_cgroup: CappedGroup) -> None:
    if not test_cgroup.support.has("pids"):
        pytest.skip("no pids cgroup can be written here")
    result = supervise([sys.executable, "-c", FORK_BOMB], Limits(pids=64), test_cgroup.support, test_cgroup.join)
    started = int(result.stdout.strip() or 0)
    # The interpreter is one of the 64; the test's own cap (400) would let it start far more.
    assert 0 < started < 64, result.stderr
    assert "the process limit (64 processes and threads) was reached" in result.stderr


MEMORY_HOG = """
import os, time
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        hog = b"x" * (200 * 1024 * 1024)  # written, so every page is really held
        time.sleep(3)
        os._exit(0)
    children.append(pid)
held = sum(os.waitpid(pid, 0)[1] == 0 for pid in children)
print(held, flush=True)
"""


@costly
def test_memory_spread_over_child_processes_is_limited_in_total(test_cgroup: CappedGroup) -> None:
    # 3 x 200 MB: each under an address-space limit of 256 MiB, together far above the group's.
    result = supervise([sys.executable, "-c", MEMORY_HOG], Limits(memory_mb=256), test_cgroup.support, test_cgroup.join)
    assert result.stdout.strip() and int(result.stdout) < 3, result.stderr
    assert "the memory limit (256 MiB in total) was reached" in result.stderr


@needs_bwrap
@pytest.mark.skipif(not sandbox.tmpfs_size_supported(), reason="this bubblewrap cannot size a tmpfs (--size needs 0.8.0)")
def test_writing_past_the_private_tmp_fails_with_no_space_left() -> None:
    bwrap = sandbox.find_bwrap() or "bwrap"
    program = ["/bin/sh", "-c", "head -c 33554432 /dev/zero > /tmp/big; echo status $?; wc -c < /tmp/big"]
    command = sandbox.bwrap_command(sandbox.Sandbox(), program, bwrap, tmp_size_mb=16)
    result = supervise(command, Limits(tmp_mb=16, memory_mb=None), limits.detect())
    assert "No space left on device" in result.stderr
    status, size = result.stdout.split("\n")[0], int(result.stdout.split("\n")[1])
    assert status != "status 0" and size <= 16 * MIB


def test_a_written_file_stops_at_the_file_size_limit(tmp_path: Path) -> None:
    target = tmp_path / "big"
    program = ["/bin/sh", "-c", f"head -c {16 * MIB} /dev/zero > {target}"]
    result = supervise(program, Limits(file_mb=8), limits.detect())
    assert result.returncode != 0
    assert target.stat().st_size <= 8 * MIB


def test_the_supervisor_refuses_to_start_when_its_cgroup_cannot_be_made(tmp_path: Path) -> None:
    fake = CgroupSupport("cgroup v1", (("memory", str(tmp_path / "no" / "such")),))
    result = supervise(["/bin/true"], Limits(), fake)
    assert result.returncode == 125
    assert "cannot set up the resource limits" in result.stderr


# -- detection and description, on made-up /proc files ---------------------------------------

V1_CGROUP = "9:name=systemd:/\n8:pids:/\n4:memory:/jobs/grader\n0::/\n"
V1_MOUNTS = (
    "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "31 25 0:27 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "32 25 0:28 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
)


def test_the_cgroup_files_are_read_for_every_hierarchy() -> None:
    assert limits.own_cgroups(V1_CGROUP) == {"name=systemd": "/", "pids": "/", "memory": "/jobs/grader", "": "/"}
    mounts = limits.cgroup_mounts(V1_MOUNTS)
    assert mounts == {"memory": ("/sys/fs/cgroup/memory", "/"), "pids": ("/sys/fs/cgroup/pids", "/"), "": ("/sys/fs/cgroup/unified", "/")}
    assert limits.group_folder(mounts["memory"], "/jobs/grader") == "/sys/fs/cgroup/memory/jobs/grader"
    # A container that sees only its own part of the hierarchy, mounted at the top.
    assert limits.group_folder(("/sys/fs/cgroup", "/pod/c1"), "/pod/c1/grader") == "/sys/fs/cgroup/grader"
    assert limits.group_folder(("/sys/fs/cgroup", "/pod/c1"), "/elsewhere") is None


def test_a_delegated_cgroup_v2_subtree_is_used(tmp_path: Path) -> None:
    group = tmp_path / "user" / "grader"
    group.mkdir(parents=True)
    (group / "cgroup.controllers").write_text("cpu memory pids\n")
    (group / "cgroup.subtree_control").write_text("memory pids\n")
    mounts = f"40 25 0:29 / {tmp_path} rw - cgroup2 cgroup2 rw\n"
    support = detect_from("0::/user/grader\n", mounts)
    assert support == CgroupSupport("cgroup v2", (("unified", str(group)),))
    flags = supervisor_flags(Limits(), support)
    assert flags[:2] == ["--cgroup", f"unified:{group}"] and flags[-1] == "0"  # no address-space limit with a memory cgroup


def test_a_cgroup_v2_without_the_controllers_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu\n")
    support = detect_from("0::/\n", f"40 25 0:29 / {tmp_path} rw - cgroup2 cgroup2 rw\n")
    assert support.mechanism == "none" and "no memory or pids controller" in support.reason


def test_the_description_says_which_limits_held_and_by_what() -> None:
    v1 = CgroupSupport("cgroup v1", (("memory", "/m"), ("pids", "/p")))
    assert describe(Limits(), True, v1) == (
        "cgroup v1 (memory 1024 MiB, pids 256), tmpfs 256 MiB, cpu 60 s per process (build 120 s), file 256 MiB"
    )
    none = CgroupSupport("none", (), "no cgroup hierarchy is mounted")
    text = describe(Limits(), False, none)
    assert text.startswith("rlimits only, no writable cgroup: no cgroup hierarchy is mounted (")
    assert "address space 1024 MiB per process" in text and "tmpfs" not in text
    assert describe(Limits.off(), True, v1) == "off"


def test_without_a_cgroup_the_limits_fall_back_to_rlimits() -> None:
    none = CgroupSupport("none", (), "none here")
    flags = supervisor_flags(Limits(memory_mb=300, pids=50, file_mb=8, cpu_s=7), none)
    assert "--cgroup" not in flags and "--memory" not in flags
    assert flags == ["--nproc", "50", "--fsize", str(8 * MIB), "7", str(300 * MIB)]


def test_no_limits_means_the_grader_as_before() -> None:
    assert supervisor_flags(Limits.off(), CgroupSupport("cgroup v1", (("memory", "/m"),))) == ["0", "0"]


# -- a class graded beside a fork bomb --------------------------------------------------------

#: Appended to the bomber's compiled types.js: when the module loads, it starts sleeping processes
#: and keeps starting more, so it holds every process it can for as long as it runs.
SLOW_TEXTOF = "export function textOf(message) {\n  for (const until = Date.now() + 200; Date.now() < until; );\n"
BOMB_JS = """
import { spawn as spawnBomb } from "node:child_process";
const bombTick = () => {
  for (let i = 0; i < 64; i++) {
    try {
      spawnBomb("/bin/sleep", ["600"], { stdio: "ignore" }).on("error", () => {});
    } catch {}
  }
};
setInterval(bombTick, 20).unref();
bombTick();
"""


@needs_node
def test_a_fork_bomb_in_a_batch_costs_its_classmates_nothing(test_cgroup: CappedGroup, tmp_path: Path) -> None:
    if not test_cgroup.support.has("pids"):
        pytest.skip("no pids cgroup can be written here")
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for index in range(1, 4):
        (submissions / f"correct-{index}").symlink_to(CORRECT, target_is_directory=True)
    # textOf also takes 0.2 s (within the case timeout, so the program is never restarted): the
    # bomber runs, holding its processes, while its classmates are built and graded beside it.
    patched_copy(submissions / "bomber", "types.js", "export function textOf(message) {\n", SLOW_TEXTOF)
    append_to_module(submissions / "bomber", "types.js", BOMB_JS)
    out = tmp_path / "out"
    # The whole batch (grader, builds, programs) runs in the test's cgroup (400 processes): a bomb
    # with no limit of its own takes them all; with one (128), the classmates keep the rest.
    require("needs_bwrap")  # --jobs 2 without a sandbox is refused
    arguments = ["grade-batch", str(submissions), "--jobs", "2", "--pids-limit", "128", "--out", str(out)]
    command = ["/bin/sh", "-c", _JOIN, "sh", sys.executable, "-m", "conformance.cli", *arguments]
    env = {**cli_env(), "PI_TEST_JOIN": " ".join(test_cgroup.join)}
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL, env=env, cwd=REPO)
    graded = rows(out / "gradebook.csv")
    assert set(graded) == {"correct-1", "correct-2", "correct-3", "bomber"}, result.stderr[-3000:]
    for name in ("correct-1", "correct-2", "correct-3"):
        assert (graded[name]["status"], graded[name]["total"]) == ("ok", "100.00"), (name, graded[name], result.stderr[-3000:])
    assert graded["bomber"]["limits"].startswith(f"{test_cgroup.support.mechanism} (") and "pids 128" in graded["bomber"]["limits"]


def test_a_group_left_by_a_killed_supervisor_with_the_same_pid_is_cleared_not_fatal(test_cgroup: CappedGroup) -> None:
    # A supervisor killed outright leaves its pi-conformance-<pid> group; once the pid is reused,
    # the new supervisor's mkdir met it and the program failed to start (exit 125, seen under load).
    from conformance.isolation import supervisor

    stale = [os.path.join(parent, f"{supervisor.GROUP_PREFIX}{os.getpid()}") for _, parent in test_cgroup.support.parents]
    for folder in stale:
        os.mkdir(folder)
    options = supervisor.Options(
        [arg for kind, parent in test_cgroup.support.parents for arg in ("--cgroup", f"{kind}:{parent}")] + ["0", "0"]
    )
    made = supervisor.create_groups(options)
    try:
        assert [folder for _, folder in made] == stale and all(os.path.isdir(folder) for folder in stale)
    finally:
        for _, folder in made:
            empty_and_remove(folder)


def test_groups_of_dead_supervisors_are_removed_and_live_ones_kept(test_cgroup: CappedGroup) -> None:
    # A batch kills a finished worker's whole process group: a supervisor still in it dies before
    # removing its groups. The batch removes groups whose supervisor is dead after every job.
    dead = subprocess.Popen(["true"])
    dead.wait()
    support = test_cgroup.support
    orphans = [os.path.join(parent, f"{limits.GROUP_PREFIX}{dead.pid}") for _, parent in support.parents]
    alive = [os.path.join(parent, f"{limits.GROUP_PREFIX}{os.getpid()}") for _, parent in support.parents]
    for folder in (*orphans, *alive):
        os.mkdir(folder)
    try:
        assert budget.remove_orphan_groups(support) == len(orphans)
        assert not any(os.path.isdir(folder) for folder in orphans)
        assert all(os.path.isdir(folder) for folder in alive)
    finally:
        for folder in alive:
            empty_and_remove(folder)
