"""Programs whose children keep a pipe open, escape with setsid, or hang cannot stall the grader.

Before the supervisor, ``close()`` waited forever for an end of file that a stray child
held back, and Ctrl-C did not help. Every test here checks that the run ends in bounded
time and that nothing the program started is still running afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.adapters.kinds import resolve_adapter
from conformance.adapters.process import ProcessAdapter
from conformance.adapters.process_options import ProcessOptions
from conformance.adapters.settings import ImplSettings
from conformance.loading.loader import Suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from tests.support.attack_projects import append_to_module, copy_project, kill_leftovers, new_marker, spawn_child_js, wait_until_gone
from tests.support.cli_runner import cli
from tests.support.paths import FAKES, REPO
from tests.support.requirements import costly, needs_bwrap, needs_node

SERVER = ["-m", "conformance.server", "--impl", "reference"]
SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]


@pytest.fixture
def marker() -> Iterator[str]:
    word = new_marker()
    yield word
    kill_leftovers(word)


def wrapper(tmp_path: Path, marker: str, how: str) -> Path:
    """A Python program that starts a child holding its stdin and stdout, then becomes the reference server."""
    start = {
        # A plain background child: same process group, stdin and stdout inherited.
        "background": "subprocess.Popen(SLEEP)",
        # setsid: its own session and process group, out of reach of a group kill.
        "setsid": "subprocess.Popen(SLEEP, start_new_session=True)",
        # A daemon: double fork and setsid, re-parented away from the program at once.
        "daemon": "pid = os.fork()\nif pid == 0:\n    os.setsid()\n    subprocess.Popen(SLEEP)\n    os._exit(0)\nos.waitpid(pid, 0)",
    }[how]
    script = tmp_path / f"wrapper-{how}.py"
    script.write_text(
        "import os, subprocess, sys\n"
        f"SLEEP = [sys.executable, '-c', 'import time; time.sleep(900)', {marker!r}]\n"
        f"{start}\n"
        f"os.execv(sys.executable, [sys.executable, *{SERVER!r}])\n",
        encoding="utf-8",
    )
    return script


def some_cases(suite: Suite, count: int = 3) -> list[Case]:
    return [case for case in suite.cases if case.operation == "text_of"][:count]


@pytest.mark.parametrize("how", ["background", "setsid", "daemon"])
def test_a_child_holding_the_pipes_neither_stalls_nor_outlives_the_run(how: str, tmp_path: Path, suite: Suite, marker: str) -> None:
    adapter = ProcessAdapter(ProcessOptions([sys.executable, str(wrapper(tmp_path, marker, how))], cwd=REPO, env={"PYTHONPATH": str(REPO)}))
    outcomes = [run_alone(adapter, case, 5.0) for case in some_cases(suite)]
    assert {outcome.status for outcome in outcomes} == {"passed"}
    started = time.monotonic()
    adapter.close()
    assert time.monotonic() - started < 5
    assert wait_until_gone(marker) == []


@costly
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_hung_program_with_a_stray_child_times_out_promptly_and_restarts(sandbox: str, tmp_path: Path, suite: Suite, marker: str) -> None:
    script = tmp_path / "hangs.py"
    script.write_text(
        "import os, subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)', {marker!r}], start_new_session=True)\n"
        f"os.execv(sys.executable, [sys.executable, {str(FAKES / 'misbehaving.py')!r}, 'hang-on:text_of'])\n",
        encoding="utf-8",
    )
    adapter = resolve_adapter(f"cmd:{sys.executable} {script}", ImplSettings(env={"PYTHONPATH": str(REPO)}, sandbox=sandbox))  # type: ignore[arg-type]
    assert adapter.isolation == sandbox
    started = time.monotonic()
    try:
        outcomes = [run_alone(adapter, case, 0.5) for case in some_cases(suite, 4)]
    finally:
        adapter.close()
    # Three timeouts, then the transport stops trying text_of; each kill takes well under a second.
    assert [outcome.timed_out for outcome in outcomes] == [True, True, True, True]
    assert time.monotonic() - started < 15
    assert wait_until_gone(marker) == []


def grade_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    # --no-build: the stray children start when a compiled module loads, which a build never does.
    # The strays inherit the program's pipes, not the grader's: a CLI forked by tests.support.cli_runner will do.
    return cli("grade", "--no-build", *args, timeout=timeout)


@needs_node
@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize(
    "options",
    ['{stdio: "inherit"}', '{stdio: "inherit", detached: true}', '{stdio: ["pipe", "inherit", "inherit"], detached: true}'],
    ids=["inherit", "inherit-setsid", "stdout-setsid"],
)
def test_a_student_whose_child_keeps_stdout_open_is_graded_in_bounded_time(sandbox: str, options: str, tmp_path: Path, marker: str) -> None:
    project = copy_project(tmp_path / "student")
    append_to_module(project, "types.js", spawn_child_js(marker, options))
    report = tmp_path / "report.json"
    started = time.monotonic()
    result = grade_cli("--impl", f"pi-course:{project}", "--sandbox", sandbox, "--budget", "60", "--json", str(report))
    assert time.monotonic() - started < 60, result.stderr[-2000:]
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["status"] == "ok"
    assert wait_until_gone(marker) == []


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@needs_node
def test_ctrl_c_ends_a_run_promptly_and_leaves_nothing_behind(tmp_path: Path, marker: str) -> None:
    project = copy_project(tmp_path / "student")
    # textOf never returns, and a detached child holds stdout: the worst case for an interrupt.
    path = project / "packages" / "pi-course" / "dist" / "src" / "types.js"
    head = "export function textOf(message) {\n"
    looping = path.read_text(encoding="utf-8").replace(head, head + "  for (;;) {}\n")
    path.write_text(looping, encoding="utf-8")
    append_to_module(project, "types.js", spawn_child_js(marker, '{stdio: "inherit", detached: true}'))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "conformance.cli", "grade", "--no-build", "--impl", f"pi-course:{project}"]
    command += ["--sandbox", "none", "--timeout", "5"]
    log = tmp_path / "grade.log"
    with log.open("wb") as output:
        # SIGINT as at a terminal: pytest started as a background job of a script inherits it ignored.
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT, preexec_fn=_default_sigint)
    try:
        deadline = time.monotonic() + 30
        while not wait_until_gone(marker, 0) and time.monotonic() < deadline:
            time.sleep(0.1)  # until the student's child runs, so there is something to clean up
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGINT)  # a second Ctrl-C, so the log shows where the first was lost
            time.sleep(1)
            pytest.fail("the grader was still running 15 s after Ctrl-C; its output:\n" + log.read_text(errors="replace")[-4000:])
    finally:
        process.kill()
    assert wait_until_gone(marker) == []
