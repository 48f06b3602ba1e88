"""Without bubblewrap, classmates graded at once stay apart, or the batch refuses (issue 32).

Under ``grade-batch --jobs 2 --sandbox none --run-as UID`` every build and adapter ran as one
user: one submission's build script killed its classmates' adapters, wrote into their built
copies (found through ``/proc``), and read the private set, the gradebook and their reports.
Here the attacker is such a build script; it prints what it managed, then fails its build, so
its log (kept in its report folder) says.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import toolchain
from tests.support.attack_projects import CORRECT, copy_project
from tests.support.build_rules import own_script_rubric
from tests.support.cli_runner import cli
from tests.support.requirements import needs_node, needs_npm, needs_toolchain

pytestmark = [
    needs_node,
    needs_npm,
    needs_toolchain,
    pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="running students as other uids needs root on Linux"),
]

#: Uids no account uses on a test machine.
FIRST_UID = 61_000

# For about 40 s: kill every course adapter it can signal, write into its folder, read the secrets.
# (The script is its own command line: the patterns are written so that it finds only the others.)
ATTACK = """
for i in $(seq 1 120); do
  for f in $(grep -l adapters/nod[e] /proc/[0-9]*/cmdline 2>/dev/null); do
    d=${f%/cmdline}
    kill -9 ${d#/proc/} 2>/dev/null && echo KILLED-classmate
    cwd=$(readlink $d/cwd 2>/dev/null) && echo pwned >> "$cwd/PWNED" 2>/dev/null && echo WROTE-classmate-copy
  done
  cat HELD/ch0*/*.yaml > /dev/null 2>&1 && echo READ-private-set
  cat OUT/gradebook.csv > /dev/null 2>&1 && echo READ-gradebook
  cat OUT/reports/correct-*/report.md > /dev/null 2>&1 && echo READ-classmate-report
  sleep 0.3
done 2>&1 | sort | uniq -c
echo attack-$((6 * 7))-done
exit 1
"""
BREACHES = ("KILLED-classmate", "WROTE-classmate-copy", "READ-private-set", "READ-gradebook", "READ-classmate-report")
DONE = "attack-42-done"


def breaches(log: str) -> list[str]:
    """What the attacker says it managed: the counted lines of its output (its log also shows its script)."""
    return [breach for breach in BREACHES if re.search(rf"^\s*\d+ {breach}$", log, re.MULTILINE)]


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder any user can reach (pytest's own are root's alone): where the private set and OUT go, as on a grading host."""
    folder = Path(tempfile.mkdtemp(prefix="pi-classmates-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _class(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The submissions (the attacker and two correct classmates), the private set (as ``private-set`` writes it), OUT.

    The pinned toolchain is copied where the uids can read it (root's cache is root's alone).
    """
    held, out = tmp_path / "held-out", tmp_path / "out"
    shutil.copytree(toolchain.folder(), tmp_path / "toolchain", symlinks=True)
    made = cli("private-set", "--seed", "classmates", "--cases", "20", "--out", str(held), timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for index in (1, 2):
        (submissions / f"correct-{index}").symlink_to(CORRECT, target_is_directory=True)
    package = copy_project(submissions / "attacker") / "packages" / "pi-course"
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["build"] = ATTACK.replace("HELD", str(held)).replace("OUT", str(out))
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    return submissions, held, out


def _grade_batch(open_folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    # The attacker is a build script: the rubric has the submission's own script run (by default none does).
    rubric = own_script_rubric(open_folder)
    env = {toolchain.ENV_VAR: str(open_folder / "toolchain")}
    return cli("grade-batch", *arguments, "--rubric", str(rubric), env=env, timeout=600)


def _rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "gradebook.csv").open(encoding="utf-8") as file:
        return {row["submission"]: row for row in csv.DictReader(file)}


def _attack_log(out: Path) -> str:
    log = out / "reports" / "attacker" / "build.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


def test_concurrent_jobs_as_one_user_without_a_sandbox_are_refused(open_folder: Path) -> None:
    submissions, held, out = _class(open_folder)
    arguments = [str(submissions), "--jobs", "2", "--sandbox", "none", "--run-as", str(FIRST_UID)]
    result = _grade_batch(open_folder, *arguments, "--held-out", str(held), "--out", str(out))
    graded = _rows(out) if (out / "gradebook.csv").exists() else {}
    log = _attack_log(out)
    what = f"rows {[(name, row['status'], row['total']) for name, row in graded.items()]}; the attacker managed {breaches(log)}:\n{log}"
    assert result.returncode == 2, f"graded two at once as one user: {what}"
    assert "--jobs 2 without a sandbox runs every submission as one user" in result.stderr and "--run-as-range" in result.stderr
    assert not graded


def test_with_a_uid_per_job_a_build_reaches_no_classmate_and_no_secret(open_folder: Path) -> None:
    submissions, held, out = _class(open_folder)
    arguments = [str(submissions), "--jobs", "2", "--sandbox", "none", "--run-as-range", f"{FIRST_UID}-{FIRST_UID + 1}"]
    result = _grade_batch(open_folder, *arguments, "--held-out", str(held), "--out", str(out))
    graded = _rows(out)
    log = _attack_log(out)
    assert DONE in log, (result.stderr[-2000:], log)
    assert breaches(log) == [], log
    for name in ("correct-1", "correct-2"):
        assert (graded[name]["status"], graded[name]["total"]) == ("ok", "100.00"), (name, graded[name], log)
    # What the grader wrote is its own: a submission's uid can open none of it.
    for path in (out, out / "gradebook.csv", out / "reports" / "correct-1" / "report.md", held, *held.rglob("*.yaml")):
        assert path.stat().st_mode & 0o077 == 0, f"{path} is open to others: {oct(path.stat().st_mode)}"


def test_a_range_smaller_than_the_jobs_is_refused(tmp_path: Path) -> None:
    (tmp_path / "submissions" / "one").mkdir(parents=True)
    arguments = ["grade-batch", str(tmp_path / "submissions"), "--jobs", "3", "--sandbox", "none", "--run-as-range", "61000-61001"]
    result = cli(*arguments, "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "--run-as-range holds 2 uid(s) for --jobs 3" in result.stderr


def test_private_output_closes_what_is_written_and_gives_the_umask_back(tmp_path: Path) -> None:
    from conformance.common.atomic_file import private_output, write_text_atomic

    before = os.umask(0o022)
    try:
        with private_output():
            write_text_atomic(tmp_path / "reports" / "report.md", "secret\n")
        assert (tmp_path / "reports").stat().st_mode & 0o777 == 0o700
        assert (tmp_path / "reports" / "report.md").stat().st_mode & 0o777 == 0o600
        write_text_atomic(tmp_path / "public.md", "public\n")  # a command called in process leaves its caller's umask
        assert (tmp_path / "public.md").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(before)
