"""The process supervisor (``conformance/isolation/supervisor.py``) on its own, without a transport around it.

The transports have a second line of defence (they kill every process carrying their session
marker), so the tests that go through them cannot tell whether the supervisor did its job.
These run the script directly, as the transports do: ``python -I -S supervisor.py CPU MEMORY
PROGRAM ARGS...``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from conformance.isolation.confine import SUPERVISOR
from tests.support.attack_projects import kill_leftovers, new_marker, running_with, wait_until_gone
from tests.support.requirements import costly

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the supervisor uses Linux's child subreaper and /proc")


@pytest.fixture
def marker() -> Iterator[str]:
    word = new_marker()
    yield word
    kill_leftovers(word)


def supervised(program: str, cpu_s: int = 0) -> subprocess.Popen[bytes]:
    """The supervisor running ``python -c PROGRAM``, with its stdin and stdout as pipes."""
    command = [sys.executable, "-I", "-S", str(SUPERVISOR), str(cpu_s), "0", sys.executable, "-c", program]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def daemon(marker: str) -> str:
    """Python code that leaves a double-forked, setsid'd sleeper holding stdout open.

    The marker is spelled in hex: in plain text it would be in this program's command line
    (and the supervisor's), and they would count as the sleeper.
    """
    return (
        "import os, sys, time\n"
        f"marker = bytes.fromhex({marker.encode().hex()!r})\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(900)', marker.decode()])\n"
        "    os._exit(0)\n"
        "def seen():\n"
        "    for pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "        try:\n"
        "            if marker in open(f'/proc/{pid}/cmdline', 'rb').read():\n"
        "                return True\n"
        "        except OSError:\n"
        "            pass\n"
        "    return False\n"
        "while not seen():\n"
        "    time.sleep(0.01)\n"
    )


def test_a_daemon_left_behind_is_killed_and_stdout_ends_when_the_program_exits(marker: str) -> None:
    process = supervised(daemon(marker) + "sys.exit(3)\n")
    started = time.monotonic()
    out, _ = process.communicate(timeout=30)  # returns only once no one holds stdout open
    assert time.monotonic() - started < 10
    assert process.returncode == 3 and out == b""
    assert wait_until_gone(marker) == []


def test_sigterm_takes_the_whole_tree_down(marker: str) -> None:
    process = supervised(daemon(marker) + "time.sleep(900)\n")
    deadline = time.monotonic() + 10
    while not running_with(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert running_with(marker), "the daemon never started"
    process.terminate()
    process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM
    assert wait_until_gone(marker) == []


def test_a_program_killed_by_a_signal_is_reported_killed_by_it() -> None:
    process = supervised("import os, signal; os.kill(os.getpid(), signal.SIGUSR1)")
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGUSR1


@costly
def test_the_cpu_limit_ends_a_spinning_program_with_sigxcpu() -> None:
    process = supervised("while True: pass", cpu_s=1)
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGXCPU


def test_a_program_that_cannot_start_exits_127_saying_why() -> None:
    command = [sys.executable, "-I", "-S", str(SUPERVISOR), "0", "0", "/no/such/program"]
    done = subprocess.run(command, capture_output=True, timeout=30)
    assert done.returncode == 127
    assert b"cannot start /no/such/program" in done.stderr
