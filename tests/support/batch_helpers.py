"""Small, fast classes of submissions for the batch tests: each is a folder whose ``behaviour``
file tells one shell script what to do before it serves the reference over the wire.

Graded with a rubric of lab 3.1 only, a submission takes well under a second, so the tests
can afford to kill, interrupt and resume whole batches.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from tests.support.cli_runner import cli, cli_env
from tests.support.paths import REPO

__all__ = ["KILL_ONCE", "RUBRIC", "SCRIPT", "cli", "cli_env", "make_class", "rows"]

RUBRIC = 'version: 1\nname: lab 3.1 only\nlabs:\n  "3.1": {weight: 10}\n'

# $1 is the submission's folder; exactly one argument, however odd its name.
SCRIPT = """#!/bin/sh
[ $# -eq 1 ] || { echo "expected one argument, got $#" >&2; exit 3; }
# The grading worker above this program (past the process supervisor between them).
worker() {
  pid=$PPID
  while [ "$pid" -gt 1 ]; do
    if tr '\\0' ' ' < /proc/$pid/cmdline | grep -q conformance.farm.forkserver; then echo "$pid"; return; fi
    pid=$(awk '{print $4}' /proc/$pid/stat)
  done
}
behaviour=$(cat "$1/behaviour" 2>/dev/null || echo ok)
case "$behaviour" in
  kill-parent)
    kill -9 "$(worker)"
    sleep 30;;
  kill-fork-server)
    # The worker's parent: the fork server of the whole batch.
    server=$(awk '{print $4}' /proc/$(worker)/stat)
    echo "$server $(tr '\\0' ' ' < /proc/$server/cmdline)" >> "$1/killed"
    kill -9 "$server"
    sleep 30;;
  slow) sleep 0.5;;
  kill-parent-once) exec "$PYEXE" -c "$KILL_ONCE" "$1";;
esac
exec "$PYEXE" -m conformance.server --impl reference
"""

# Serves the reference, logging each request's op to $1/requests; the first time the 5th
# request arrives (a marker file remembers it), it kills the grading worker instead of answering.
KILL_ONCE = """
import json, os, signal, subprocess, sys, time
folder = sys.argv[1]
server = subprocess.Popen([sys.executable, "-m", "conformance.server", "--impl", "reference"], stdin=subprocess.PIPE)
for count, line in enumerate(sys.stdin, start=1):
    with open(os.path.join(folder, "requests"), "a") as log:
        log.write(json.loads(line)["op"] + "\\n")
    if count == 5 and not os.path.exists(os.path.join(folder, "killed")):
        open(os.path.join(folder, "killed"), "w").close()
        pid = os.getppid()
        while pid > 1:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                if b"conformance.farm.forkserver" in file.read():
                    os.kill(pid, signal.SIGKILL)
                    break
            with open(f"/proc/{pid}/stat") as file:
                pid = int(file.read().rsplit(")", 1)[1].split()[1])
        time.sleep(30)
    server.stdin.write(line.encode())
    server.stdin.flush()
"""


def make_class(root: Path, behaviours: dict[str, str]) -> tuple[Path, list[str]]:
    """Submission folders under ``root/submissions``; the grade-batch arguments that grade them."""
    submissions = root / "submissions"
    for name, behaviour in behaviours.items():
        (submissions / name).mkdir(parents=True)
        (submissions / name / "behaviour").write_text(behaviour + "\n", encoding="utf-8")
    script = root / "serve.sh"
    script.write_text(SCRIPT, encoding="utf-8")
    rubric = root / "rubric.yaml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    arguments = [
        "grade-batch",
        str(submissions),
        "--rubric",
        str(rubric),
        "--impl-template",
        f"cmd:sh {script} {{path}}",
        "--env",
        f"PYEXE={sys.executable}",
        "--env",
        f"PYTHONPATH={REPO}",
        "--env",
        f"KILL_ONCE={KILL_ONCE}",
    ]
    return submissions, arguments


def rows(gradebook: Path) -> dict[str, dict[str, str]]:
    """A gradebook's rows by submission."""
    with gradebook.open(encoding="utf-8", newline="") as file:
        return {row["submission"]: row for row in csv.DictReader(file)}
