"""Each submission is graded in a supervised worker process, and the gradebook is a journal.

A submission that kills its worker costs only its own row; a worker that overruns is
killed; rows are appended as submissions finish, so a batch killed midway keeps them and
the same command resumes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conformance.adapters.kinds import parse_impl
from conformance.farm.job import grade_supervised
from conformance.grading.grader import GradeOptions, grade_submission, prepare
from conformance.grading.result_json import ResultFormatError, result_from_json, result_to_json
from conformance.grading.rubric import parse_rubric
from tests.support.batch_helpers import RUBRIC, cli, cli_env, make_class, rows
from tests.support.paths import REPO
from tests.support.requirements import costly

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process groups, prctl and /proc are Linux features here")


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in command:
                found.append(f"{entry.name}: {command}")
    return found


@costly
def test_a_submission_that_kills_its_parent_costs_only_its_own_row(tmp_path: Path) -> None:
    behaviours = {"ann": "ok", "b o'brien": "ok", "killer": "kill-parent", "zed": "ok"}
    submissions, arguments = make_class(tmp_path, behaviours)
    # Without the sandbox the student can see (and kill) the worker; the batch must survive it.
    # One at a time: two at once without a sandbox would run as one user, which grade-batch refuses.
    result = cli(*arguments, "--jobs", "1", "--sandbox", "none", "--out", str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    graded = rows(tmp_path / "out" / "gradebook.csv")
    assert list(graded) == ["ann", "b o'brien", "killer", "zed"]
    assert graded["killer"]["status"] == "crashed"
    assert "killed by SIGKILL" in graded["killer"]["detail"]
    for name in ("ann", "b o'brien", "zed"):  # a quoted name reaches the program as one argument
        assert (graded[name]["status"], graded[name]["total"]) == ("ok", "10.00"), graded[name]
    assert (tmp_path / "out" / "reports" / "killer" / "report.json").is_file()
    assert not (tmp_path / "out" / ".work").exists()
    # What the killer left running (its shell, in a session of its own) was reaped with it.
    assert _processes_mentioning(str(submissions / "killer")) == []


@costly
def test_a_submission_that_kills_the_fork_server_costs_only_its_own_row(tmp_path: Path) -> None:
    submissions, arguments = make_class(tmp_path, {"ann": "ok", "killer": "kill-fork-server", "zed": "ok"})
    # Without the sandbox the student can see (and kill) every process of the grader's user.
    result = cli(*arguments, "--jobs", "1", "--sandbox", "none", "--out", str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    graded = rows(tmp_path / "out" / "gradebook.csv")
    assert graded["killer"]["status"] == "crashed" and "killed by SIGKILL" in graded["killer"]["detail"], graded["killer"]
    # Each of its three workers died with the server it killed; a new server came up each time.
    assert graded["killer"]["detail"].count("killed by SIGKILL") == 3, graded["killer"]["detail"]
    killed = (submissions / "killer" / "killed").read_text(encoding="utf-8").splitlines()
    assert len(killed) == 3 and all("--fork-server" in line for line in killed), killed
    assert len({line.split()[0] for line in killed}) == 3, killed
    for name in ("ann", "zed"):
        assert (graded[name]["status"], graded[name]["total"]) == ("ok", "10.00"), graded[name]
    assert _processes_mentioning(str(submissions / "killer")) == []
    batch_pid = killed[0].split()[-1]  # the fork server's command line ends with its batch's pid
    assert _processes_mentioning(f"--fork-server {batch_pid}") == [], "the last server ends with its batch"


@costly
def test_a_worker_killed_midway_keeps_what_it_graded_and_a_new_worker_grades_the_rest(tmp_path: Path) -> None:
    submissions, arguments = make_class(tmp_path, {"ann": "ok", "killer": "kill-parent-once"})
    result = cli(*arguments, "--jobs", "1", "--sandbox", "none", "--out", str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    graded = rows(tmp_path / "out" / "gradebook.csv")
    killer = graded["killer"]
    assert killer["status"] == "crashed" and "killed by SIGKILL" in killer["detail"], killer
    assert "the other cases were graded in a new worker" in killer["detail"]
    cases = json.loads((tmp_path / "out" / "reports" / "killer" / "report.json").read_text(encoding="utf-8"))["cases"]
    # The 5th request (the hello, then the 4th case) killed the worker: that case alone is lost.
    lost = [case for case in cases if case["status"] != "passed"]
    assert [case["id"] for case in lost] == [cases[3]["id"]], lost
    assert lost[0]["message"].startswith("the grading worker died while this case ran")
    assert f"during case {cases[3]['id']}" in killer["detail"]
    # Nothing was graded twice: one request per case, besides each worker's hello and the last one's stop.
    ops = [op for op in (submissions / "killer" / "requests").read_text(encoding="utf-8").split() if op != "stop"]
    assert ops.count("hello") == 2 and len(ops) - 2 == len(cases), ops
    assert float(killer["total"]) == pytest.approx(10 * (len(cases) - 1) / len(cases), abs=0.01)
    assert graded["ann"]["total"] == "10.00"


@costly
def test_a_worker_past_its_hard_limit_is_killed_and_timed_out(tmp_path: Path) -> None:
    context = prepare(parse_rubric(yaml.safe_load(RUBRIC)))
    started = time.monotonic()
    # `sleep` never says hello: the handshake alone would wait 10 s.
    supervised = grade_supervised(parse_impl("cmd:sleep 60"), "sleeper", context, GradeOptions(), tmp_path, limit_s=1.5)
    assert supervised is not None
    assert time.monotonic() - started < 8
    assert supervised.result.status == "timed-out"
    assert "hard limit" in supervised.result.detail
    assert supervised.result.score.points == 0


def test_a_result_survives_its_trip_through_json() -> None:
    context = prepare(parse_rubric(yaml.safe_load(RUBRIC)))
    result = grade_submission("reference", context)
    data = json.loads(json.dumps(result_to_json(result)))
    back = result_from_json(data, context)
    assert (back.name, back.status, back.detail, back.score.points) == (result.name, result.status, result.detail, result.score.points)
    assert [graded.outcome for graded in back.score.cases] == [graded.outcome for graded in result.score.cases]


def test_a_result_that_does_not_fit_the_run_is_refused() -> None:
    context = prepare(parse_rubric(yaml.safe_load(RUBRIC)))
    data = result_to_json(grade_submission("reference", context))
    for broken in (
        {**data, "outcomes": data["outcomes"][1:]},  # a case missing
        {**data, "outcomes": [*data["outcomes"], data["outcomes"][0]]},  # a case twice
        {**data, "status": "excellent"},
        {**data, "format": 99},
        {key: value for key, value in data.items() if key != "name"},
    ):
        with pytest.raises(ResultFormatError):
            result_from_json(broken, context)


def _wait_for_rows(gradebook: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gradebook.exists() and len(rows(gradebook)) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"{gradebook} did not get {count} rows in time")


@costly
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_an_interrupted_batch_keeps_its_rows_and_resumes(tmp_path: Path, how: signal.Signals) -> None:
    _, arguments = make_class(tmp_path, {name: "slow" for name in ("a1", "a2", "a3")})
    out = tmp_path / "out"
    command = [sys.executable, "-m", "conformance.cli", *arguments, "--jobs", "1", "--out", str(out)]
    batch = subprocess.Popen(command, cwd=REPO, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    gradebook = out / "gradebook.csv"
    _wait_for_rows(gradebook, 1)
    batch.send_signal(how)
    _, stderr = batch.communicate(timeout=30)
    if how == signal.SIGTERM:
        assert batch.returncode == 130 and "Run the same command again" in stderr, stderr
    kept = rows(gradebook)
    assert 1 <= len(kept) < 3
    meta = json.loads((out / "gradebook.meta.json").read_text(encoding="utf-8"))
    assert meta["complete"] is False
    time.sleep(0.5)  # a worker of the killed batch dies with it (PR_SET_PDEATHSIG) and writes nothing
    assert rows(gradebook) == kept
    assert _processes_mentioning(f"--fork-server {batch.pid}") == [], "the fork server dies with its batch"

    resumed = cli(*arguments, "--jobs", "2", "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(kept)} of 3 submissions already graded" in resumed.stderr
    final = rows(gradebook)
    assert list(final) == ["a1", "a2", "a3"]
    assert all(final[name] == row for name, row in kept.items()), "rows written before the interruption are kept as they were"
    assert json.loads((out / "gradebook.meta.json").read_text(encoding="utf-8"))["complete"] is True


@costly
def test_resuming_refuses_another_rubric_and_fresh_starts_over(tmp_path: Path) -> None:
    _, arguments = make_class(tmp_path, {"ann": "ok"})
    out = tmp_path / "out"
    assert cli(*arguments, "--out", str(out)).returncode == 0
    first = rows(out / "gradebook.csv")
    again = cli(*arguments, "--out", str(out))
    assert again.returncode == 0 and "1 of 1 submissions already graded" in again.stderr
    assert rows(out / "gradebook.csv") == first
    other = list(arguments)
    other[other.index("--rubric") : other.index("--rubric") + 2] = []  # the default rubric: other columns
    refused = cli(*other, "--out", str(out))
    assert refused.returncode == 2 and "--fresh" in refused.stderr and "Traceback" not in refused.stderr
    assert rows(out / "gradebook.csv") == first, "a refused resume leaves the gradebook alone"
    fresh = cli(*arguments, "--out", str(out), "--fresh")
    assert fresh.returncode == 0 and "already graded" not in fresh.stderr


def test_the_hard_limit_leaves_room_for_a_slow_cases_own_timeout() -> None:
    from dataclasses import replace

    from conformance.farm.job import hard_limit_s
    from conformance.loading.loader import load_suite

    cases = load_suite().cases[:3]
    options = GradeOptions(build=False, case_timeout_s=0.5, budget_s=10)
    quick = hard_limit_s(options, cases)
    slow = hard_limit_s(options, [*cases, replace(cases[0], timeout_s=30)])
    # spec/fixture-format.md, Timeouts: the case's 30 s holds under --timeout 0.5, and the case in flight may take it.
    assert slow - quick == pytest.approx(2 * (30 - 0.5))
    assert hard_limit_s(replace(options, case_timeout_s=40), cases) - quick == pytest.approx(2 * (40 - 0.5))
