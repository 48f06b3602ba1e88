"""Drills of issue 32 against one submission's budget, through the command line as staff run it.

Each drill is an attack that held on the grader before the budget existed:

- after three timeouts the engine gives an operation up and retries the cases left in four
  fresh adapters at once; each used to get a cgroup with the whole limit, so a submission whose
  every adapter holds memory held four times what it was given;
- a build that writes into files it has already deleted held gigabytes of host disk against
  the build's 1 GiB cap, which only measured the files it could see.

They import nothing of the budget itself, so they run (and fail) on a grader without one.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from conformance.adapters import course_build
from conformance.adapters.settings import ImplSettings
from conformance.isolation import limits
from conformance.isolation.limits import MIB
from tests.support.attack_projects import copy_project, new_marker
from tests.support.build_rules import own_script
from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import costly, needs_bwrap, needs_node, needs_npm, needs_toolchain

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="budgets are Linux cgroups")

LAB_31_RUBRIC = 'version: 1\nname: lab 3.1 only\nlabs:\n  "3.1": {weight: 10}\n'
#: Each adapter's hold, and the submission's memory limit: four adapters at once hold twice the limit.
HELD_MIB = 100
LIMIT_MIB = 200

# A cmd: program that holds HELD_MIB of written memory, shakes hands and then never answers:
# every case times out, the operation is given up, and its cases are retried in fresh adapters.
HOLDER = """
import json, sys, time
held = bytearray(HELD * 1024 * 1024)
for at in range(0, len(held), 4096):
    held[at] = 1
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "hello":
        print(json.dumps({"seq": request["seq"], "ok": True, "protocol": 1, "profile": "course", "implementation": {"name": "holder"}}))
        sys.stdout.flush()
    elif request["op"] == "stop":
        break
    else:
        time.sleep(3600)
"""


def _memory_cgroup() -> None:
    support = limits.detect()
    if not support.has("memory"):
        pytest.skip(f"no memory cgroup can be written here: {support.reason}")


def _anonymous_bytes(marker: str) -> dict[int, int]:
    """The anonymous memory (``RssAnon``) of every live process whose command line has ``marker``, by pid."""
    held: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() not in (entry / "cmdline").read_bytes():
                continue
            status = (entry / "status").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("RssAnon:"):
                held[int(entry.name)] = int(line.split()[1]) * 1024
    return held


class PeakSampler:
    """The highest memory the marked processes held together, sampled every few milliseconds in a thread.

    /proc is read one process after another, never at one instant: a scan can count an adapter
    that the limit is killing beside the one growing in its place, and on a loaded machine a
    scan is slow enough for that to add an adapter's whole hold. So each sample is two scans
    in a row, and a process counts with the lesser of its two readings: memory held across
    both, which is what adapters holding at once (the attack) look like.
    """

    def __init__(self, marker: str) -> None:
        self.marker, self.peak, self._done = marker, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            first, second = _anonymous_bytes(self.marker), _anonymous_bytes(self.marker)
            self.peak = max(self.peak, sum(min(held, second.get(pid, 0)) for pid, held in first.items()))
            time.sleep(0.01)

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak


@costly
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_retried_adapters_share_the_submission_memory_instead_of_multiplying_it(sandbox: str, tmp_path: Path) -> None:
    _memory_cgroup()
    marker = new_marker()
    program = tmp_path / f"{marker}.py"
    program.write_text(HOLDER.replace("HELD", str(HELD_MIB)), encoding="utf-8")
    fixtures = tmp_path / "fixtures" / "ch03"
    fixtures.mkdir(parents=True)
    # 20 cases of three operations: each given up after three timeouts, the other 11 retried four at a time.
    shutil.copy(REPO / "fixtures" / "ch03" / "constructors.yaml", fixtures)
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(LAB_31_RUBRIC, encoding="utf-8")
    sampler = PeakSampler(marker)
    arguments = ["grade", "--impl", f"cmd:{sys.executable} {program}", "--fixtures", str(fixtures.parent), "--rubric", str(rubric)]
    limits_ = ["--memory-limit", str(LIMIT_MIB), "--timeout", "0.3", "--budget", "60", "--sandbox", sandbox]
    result = cli(*arguments, *limits_, timeout=240)
    peak = sampler.stop()
    assert result.returncode in (0, 1), result.stderr[-2000:]
    # Held memory is charged to the budget: the adapters together never hold more than the limit.
    # Half an adapter's hold is allowed for a sample's two scans (PeakSampler). Without the
    # budget the four retried adapters hold 4 holds at once, steadily, twice the limit.
    held = f"the adapters held {peak / MIB:.0f} MiB together; the submission's limit is {LIMIT_MIB} MiB"
    assert 0 < peak <= (LIMIT_MIB + HELD_MIB // 2) * MIB, held


#: Each round opens a file, deletes it and writes 24 MiB into it (under the file-size limit),
#: holding every one open: six rounds, 144 MiB, none of it visible in the workspace.
UNLINKED_FILL = (
    " ".join(f"exec {fd}>junk{fd}; rm junk{fd}; head -c 25165824 /dev/zero >&{fd}; sleep 0.3;" for fd in range(3, 9)) + " sleep 2"
)


@needs_node
@needs_npm
@needs_toolchain
@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
@pytest.mark.parametrize("measure", ["tmpfs", "proc"])
def test_a_build_that_writes_into_deleted_files_is_stopped_at_the_disk_cap(
    sandbox: str, measure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if measure == "proc":  # as for a grader that is not root: no tmpfs of its own, the open files read from /proc
        monkeypatch.setattr(importlib.import_module("conformance.isolation.build_disk"), "mount_capped", lambda *_: False)
    elif os.geteuid() != 0:
        pytest.skip("only root can mount the build's tmpfs")
    # The cap lowered to 64 MiB to keep the drill small; the attack held 3 GB against 1 GiB.
    monkeypatch.setattr(course_build, "MAX_BUILD_DISK_BYTES", 64 * MIB)
    project = copy_project(tmp_path / "unlinker")
    package = project / "packages" / "pi-course"
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["build"] = UNLINKED_FILL
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    built = course_build.build_in_copy(project, package, shutil.which("node") or "node", own_script(ImplSettings(sandbox=sandbox)))  # type: ignore[arg-type]
    built.remove()
    assert built.report is not None, "a build that held 144 MiB of deleted files against a 64 MiB cap built"
    assert built.report.startswith("npm run build was stopped: it wrote more than 64 MiB"), built.report
