"""The bubblewrap sandbox: what a student program sees, and the cheats of issue 9 against it.

Every cheat is graded twice where that is cheap: without the sandbox (to show the attack
is real: it earns points) and with it (it earns no more than an empty project). The
sandbox tests skip, with the probe's reason, where bwrap is missing or cannot run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.kinds import resolve_adapter
from conformance.adapters.pi_course import NODE_ADAPTER, pi_course_adapter
from conformance.adapters.settings import ImplSettings
from conformance.isolation.sandbox import Sandbox, bwrap_command, choose_isolation, command_sandbox
from conformance.yamlio import safe as yamlsafe
from tests.support.attack_projects import (
    append_to_module,
    copy_project,
    empty_project,
    kill_leftovers,
    new_marker,
    replace_modules,
    spawn_child_js,
    wait_until_gone,
)
from tests.support.cli_runner import cli, cli_env
from tests.support.js_variants import JS
from tests.support.paths import REPO
from tests.support.requirements import needs_bwrap, needs_node
from tests.support.sandbox_attacks import classmate_reexport, fixture_forger, output_rewriter, reference_proxy

pytestmark = needs_node


def grade(project: Path, sandbox: str, *extra: str, report: Path | None = None, own_interpreter: bool = False) -> dict[str, Any]:
    """``pi-conformance grade`` on ``project``; its JSON report.

    ``own_interpreter``: a ``python -m conformance.cli`` of its own, not a fork of the tests' CLI
    server, for a project that kills its ancestors (the server and the test run among them).
    """
    report = report or project.parent / f"{project.name}-{sandbox}.json"
    # --no-build: the attacks live in the compiled modules, and the build script (node -e "") never
    # loads them; building in the sandbox is tests/toolchain/test_safe_build.py's subject.
    arguments = ["grade", "--impl", f"pi-course:{project}", "--no-build", "--sandbox", sandbox, *extra, "--json", str(report)]
    if own_interpreter:
        command = [sys.executable, "-m", "conformance.cli", *arguments]
        result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=cli_env(), timeout=300)
    else:
        result = cli(*arguments)
    assert result.returncode in (0, 1), result.stdout[-2000:] + result.stderr[-2000:]
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def empty_points(tmp_path_factory: pytest.TempPathFactory) -> float:
    """What a project that implements nothing earns: the ceiling for every cheat."""
    points = float(grade(empty_project(tmp_path_factory.mktemp("empty") / "empty"), "none")["points"])
    assert points == 0
    return points


@pytest.fixture
def marker() -> Iterator[str]:
    word = new_marker()
    yield word
    kill_leftovers(word)


# -- what a sandboxed program sees ---------------------------------------------------------


@needs_bwrap
def test_auto_picks_bwrap_here_and_adapters_say_so() -> None:
    assert choose_isolation("auto") == "bwrap"
    adapter = pi_course_adapter(str(REPO / "tests" / "support" / "js" / "course-correct"), ImplSettings())
    try:
        assert adapter.isolation == "bwrap"
    finally:
        adapter.close()
    assert resolve_adapter("cmd:node --version", ImplSettings(sandbox="none")).isolation == "none"


@needs_bwrap
def test_a_course_program_sees_its_submission_read_only_and_nothing_of_the_grader(tmp_path: Path) -> None:
    submission = copy_project(tmp_path / "alice")
    classmate = copy_project(tmp_path / "bob")
    held_out = tmp_path / "held-out-fixtures"
    held_out.mkdir()
    sandbox = Sandbox(read_only=(NODE_ADAPTER.parent, submission), chdir=submission)
    probe_script = (
        "const fs = require('fs');"
        "const can = (p) => { try { fs.accessSync(p); return true; } catch { return false; } };"
        "const writable = (p) => { try { fs.writeFileSync(p, 'x'); return true; } catch { return false; } };"
        "console.log(JSON.stringify({"
        f"submission: can({json.dumps(str(submission / 'package.json'))}),"
        f"adapter: can({json.dumps(str(NODE_ADAPTER))}),"
        f"fixtures: can({json.dumps(str(REPO / 'fixtures'))}),"
        f"held_out: can({json.dumps(str(held_out))}),"
        f"classmate: can({json.dumps(str(classmate))}),"
        f"venv: can({json.dumps(str(REPO / '.venv'))}),"
        f"reference: can({json.dumps(str(REPO / 'reference_impl'))}),"
        f"package: can({json.dumps(str(REPO / 'conformance' / 'grading'))}),"
        f"write_submission: writable({json.dumps(str(submission / 'x'))}),"
        "write_tmp: writable('/tmp/x'),"
        "uid: process.getuid(), pid: process.pid, ppid: process.ppid,"
        "}));"
    )
    command = bwrap_command(sandbox, ["/usr/bin/env", "node", "-e", probe_script])
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen == {
        "submission": True,
        "adapter": True,
        "fixtures": False,
        "held_out": False,
        "classmate": False,
        "venv": False,
        "reference": False,
        "package": False,
        "write_submission": False,
        "write_tmp": True,
        "uid": 65534,
        "pid": 2,  # a fresh PID namespace: bwrap's init is 1, and the grader is not in it
        "ppid": 1,
    }


def test_a_cmd_program_sees_what_its_command_line_names(tmp_path: Path) -> None:
    script = tmp_path / "port" / "main.mjs"
    script.parent.mkdir()
    script.write_text("", encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    seen = command_sandbox(["/usr/bin/node", str(script), str(data), "--flag"], {"PYTHONPATH": str(tmp_path / "lib")}, cwd=tmp_path)
    assert set(seen.read_only) == {script.parent, data}
    assert seen.chdir == tmp_path


# -- a student that kills its parent -------------------------------------------------------


@needs_bwrap
def test_killing_the_parent_or_any_ancestor_cannot_stop_a_sandboxed_grading(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "killer")
    # Kill the parent, then every ancestor up to the grader (without the sandbox this kills the grader).
    append_to_module(
        project,
        "types.js",
        'import { readFileSync as __read } from "node:fs";\n'
        "for (let pid = process.ppid, i = 0; pid > 0 && i < 6; i++) {\n"
        "  let next = 0, cmd = '';\n"
        "  try { next = Number(__read(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]); "
        "cmd = __read(`/proc/${pid}/cmdline`, 'utf8'); } catch {}\n"
        "  try { process.kill(pid, 'SIGKILL'); } catch {}\n"
        "  if (cmd.includes('conformance')) break;\n"
        "  pid = next;\n"
        "}",
    )
    data = grade(project, "bwrap", own_interpreter=True)
    assert (data["status"], data["points"]) == ("ok", 100.0)
    assert wait_until_gone(str(project)) == []


def test_without_the_sandbox_killing_the_parent_only_kills_the_supervisor(tmp_path: Path) -> None:
    # Recorded, not endorsed: the parent is the supervisor, so the grader goes on; an ancestor
    # walk that reaches the grader kills it (see docs/sandbox.md), which only the sandbox prevents.
    project = copy_project(tmp_path / "killer")
    # Once, in the first process only: the permission model leaves it no file to remember a kill in, but
    # request numbers go on across restarts, so only the first process sees one below 3.
    append_to_module(
        project,
        "types.js",
        'process.stdin.once("data", (chunk) => {\n'
        '  if (Number(/"seq": ?(\\d+)/.exec(String(chunk))?.[1]) < 3) process.kill(process.ppid, "SIGKILL");\n'
        "});",
    )
    data = grade(project, "none", own_interpreter=True)
    assert (data["status"], data["points"]) == ("ok", 100.0)
    assert wait_until_gone(str(project)) == []


# -- the four cheats -----------------------------------------------------------------------


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_cheat_a_proxying_to_the_graders_reference(sandbox: str, tmp_path: Path, empty_points: float) -> None:
    project = empty_project(tmp_path / "proxy")
    replace_modules(project, {"types.js": reference_proxy()})
    points = grade(project, sandbox)["points"]
    # Held with the sandbox or without: the adapter's permission model refuses child processes (issue 32).
    # Before it, unsandboxed, the cheat earned every text_of case (30 of lab 3.1's 108) for nothing.
    assert points <= empty_points


def json_fixtures(target: Path) -> Path:
    """A copy of the bundled fixtures, each file rewritten in YAML's JSON form (what the cheat can parse)."""
    for source in sorted((REPO / "fixtures").rglob("*.yaml")):
        lines = source.read_text(encoding="utf-8").splitlines()
        destination = target / source.relative_to(REPO / "fixtures")
        destination.parent.mkdir(parents=True, exist_ok=True)
        # yamlsafe: libyaml's parser, about five times faster than yaml.safe_load here.
        text = json.dumps(yamlsafe.load("\n".join(lines)), ensure_ascii=False)
        # Raw DEL, NEL, U+2028 and U+2029 (pi-ai-1's argument-text cases have them) are not valid in YAML: escaped.
        text = text.translate({code: f"\\u{code:04x}" for code in (0x7F, 0x85, 0x2028, 0x2029)})
        destination.write_text(lines[0] + "\n" + text + "\n", encoding="utf-8")
    return target


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_cheat_b_reading_the_fixtures_and_forging_answers(sandbox: str, tmp_path: Path, empty_points: float) -> None:
    fixtures = json_fixtures(tmp_path / "held-out")
    project = empty_project(tmp_path / "forger")
    # The cheat even knows where the held-out fixtures are kept.
    replace_modules(project, {"types.js": fixture_forger(fixtures)})
    points = grade(project, sandbox, "--fixtures", str(fixtures))["points"]
    # Held without the sandbox too (issue 32): the adapter's process reads only below itself and the
    # submission, so neither the fixtures nor /proc can be read. Before, unsandboxed, reading the
    # fixtures paid through the functions it exports (the lines it writes itself lack the seal).
    assert points <= empty_points


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_cheat_c_re_exporting_a_classmates_modules(sandbox: str, tmp_path: Path, empty_points: float) -> None:
    classmate = copy_project(tmp_path / "classmate")
    # A classmate at chapter 06, so that the copier's provider-adapter.js and tool.js re-export ones worth 150 points more.
    shutil.copy(JS / "chapter-05" / "provider-adapter.js", classmate / "packages" / "pi-course" / "dist" / "src" / "provider-adapter.js")
    shutil.copy(JS / "chapter-06" / "tool.js", classmate / "packages" / "pi-course" / "dist" / "src" / "tool.js")
    project = empty_project(tmp_path / "copier")
    replace_modules(project, classmate_reexport(classmate))
    data = grade(project, sandbox)
    points = data["points"]
    assert data["max_points"] == 250 and str(data["chapter"]).startswith("chapter 06: dist/src/tool.js exists")
    # Held without the sandbox too (issue 32): the adapter reads only below itself and the submission.
    # Before, unsandboxed, the copy earned 100.
    assert points <= empty_points


@pytest.mark.parametrize("sandbox", ["none", pytest.param("bwrap", marks=needs_bwrap)])
def test_cheat_d_a_detached_process_cannot_rewrite_a_report_afterwards(sandbox: str, tmp_path: Path, marker: str) -> None:
    report = tmp_path / "report.json"
    project = copy_project(tmp_path / "rewriter")
    append_to_module(project, "types.js", output_rewriter(report, marker))
    data = grade(project, sandbox, report=report)
    # The adapter's permission model refuses the spawn itself (issue 32): the module fails to load, saying so.
    assert data["points"] < 100
    assert wait_until_gone(marker) == []  # it died with the student's program (and its namespace)
    time.sleep(0.5)  # the rewriter, were it alive, looks for the report every 20 ms
    assert json.loads(report.read_text(encoding="utf-8"))["points"] == data["points"]


# -- a class -------------------------------------------------------------------------------


@needs_bwrap
def test_a_batch_with_a_grader_killer_and_a_stray_child_grades_everyone(tmp_path: Path, marker: str) -> None:
    submissions = tmp_path / "submissions"
    copy_project(submissions / "alice")
    killer = copy_project(submissions / "killer")
    append_to_module(
        killer,
        "types.js",
        'import { readFileSync as __read } from "node:fs";\n'
        "for (let pid = process.ppid, i = 0; pid > 0 && i < 6; i++) {\n"
        "  let next = 0;\n"
        "  try { next = Number(__read(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]); } catch {}\n"
        "  try { process.kill(pid, 'SIGKILL'); } catch {}\n"
        "  pid = next;\n"
        "}",
    )
    stray = copy_project(submissions / "stray")
    append_to_module(stray, "types.js", spawn_child_js(marker, '{stdio: "inherit", detached: true}'))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "conformance.cli", "grade-batch", str(submissions), "--jobs", "2", "--out", str(out)]
    started = time.monotonic()
    result = subprocess.run(
        [*command, "--sandbox", "bwrap", "--budget", "60"], capture_output=True, text=True, cwd=REPO, env=env, timeout=300
    )
    assert time.monotonic() - started < 120
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    rows = (out / "gradebook.csv").read_text(encoding="utf-8").splitlines()[1:]
    graded = {row.split(",")[0]: row.split(",")[1:3] for row in rows}
    assert graded["alice"] == graded["killer"] == ["ok", "100.00"]
    # The stray's spawn is refused by the adapter's permission model (issue 32): its types.js fails to
    # load, costing it the cases that need it, and nothing is left running.
    assert graded["stray"][0] == "ok" and float(graded["stray"][1]) < 100
    assert wait_until_gone(marker) == []


# A stand-in for @earendil-works/pi-ai whose contentText reports what the package can see.
SPYING_PI_AI = """
import { existsSync, writeFileSync } from "node:fs";
export function contentText() {
  let wrote = "no";
  try { writeFileSync(new URL("./written.txt", import.meta.url), "x"); wrote = "yes"; } catch {}
  let grader = false;
  try { grader = existsSync(process.env.PEEK ?? "/nonexistent"); } catch {}
  return JSON.stringify({ grader, wrote });
}
"""


@needs_bwrap
def test_a_pi_ai_package_is_confined_like_a_course_project(tmp_path: Path) -> None:
    from conformance.adapters.pi_ai import pi_ai_adapter

    package = tmp_path / "prefix" / "node_modules" / "@earendil-works" / "pi-ai"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@earendil-works/pi-ai", "type": "module", "main": "index.js"}))
    (package / "index.js").write_text(SPYING_PI_AI, encoding="utf-8")
    peek = {"PEEK": str(REPO / "fixtures")}
    seen = {}
    for mode in ("none", "bwrap"):
        adapter = pi_ai_adapter(str(tmp_path / "prefix"), ImplSettings(sandbox=mode, env=peek))
        try:
            assert adapter.isolation == mode
            seen[mode] = json.loads(str(adapter.perform("content_text", {"content": "x"}, [])["value"]))
        finally:
            adapter.close()
        (package / "written.txt").unlink(missing_ok=True)
    # The permission model alone (issue 32) hides the grader's files and refuses writes; the sandbox
    # adds that they are not there at all, and the package's own folder is read-only.
    assert seen["none"] == {"grader": False, "wrote": "no"}
    assert seen["bwrap"] == {"grader": False, "wrote": "no"}
