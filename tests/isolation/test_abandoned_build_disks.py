"""A build disk whose grader was killed is unmounted by the next build, not left mounted for ever (issue 32)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.adapters.course_build import BUILD_ROOT_PREFIX
from conformance.isolation import build_disk

pytestmark = pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="mounting a tmpfs needs root on Linux")


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_dead_graders_disk_is_unmounted_and_a_live_ones_is_kept(tmp_path: Path) -> None:
    dead = tmp_path / f"{BUILD_ROOT_PREFIX}{_dead_pid()}-abc"
    live = tmp_path / f"{BUILD_ROOT_PREFIX}{os.getpid()}-def"
    other = tmp_path / "someone-else"
    for root in (dead, live, other):
        root.mkdir()
        assert build_disk.mount_capped(root, 1 << 20, 64)
    try:
        assert build_disk.unmount_abandoned(tmp_path, BUILD_ROOT_PREFIX) == [dead]
        assert not dead.exists()
        assert os.path.ismount(live) and os.path.ismount(other)
    finally:
        build_disk.unmount_below(tmp_path)
