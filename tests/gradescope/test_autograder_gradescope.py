"""``pi-conformance autograder gradescope``: the zip, and its ``setup.sh`` and ``run_autograder`` run on a simulated ``/autograder``.

The end-to-end tests are slow-ish (``setup.sh`` makes a venv from the wheel and installs the
toolchain with npm, about a minute) and need root (student code runs as ``nobody``, as on
Gradescope), Node.js and npm; they skip with the reason otherwise. They run ``setup.sh`` once,
into a folder under ``/tmp`` that ``PI_AUTOGRADER_ROOT`` points the scripts at, then
``run_autograder`` once per submission.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance import __version__
from conformance.autograder.finish import finish, isolation_line
from conformance.gradescope import results as gradescope
from conformance.grading.grader import grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.toolchain import node_versions
from tests.support.build_rules import own_script_rubric
from tests.support.cli_runner import cli
from tests.support.course_projects import monorepo
from tests.support.gradescope_format import problems
from tests.support.held_out_set import write_held_out
from tests.support.paths import REPO
from tests.support.requirements import builds_wheel, needs_node, needs_npm, require

JS = REPO / "tests" / "support" / "js"
PUBLIC_HELD_OUT = "text-of-readme-assistant-skips-tool-call"


def rubric_text() -> str:
    """The shipped rubric, holding one public case out, with held-out cases shown after the due date."""
    text = (REPO / "conformance" / "grading" / "default_rubric.yaml").read_text(encoding="utf-8")
    assert "held_out: []" in text
    return text.replace("held_out: []", f"held_out: [{PUBLIC_HELD_OUT}]\nheld_out_visibility: after_due_date")


# -- the zip, without running it -------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's wheel, built once (the zip commands below are given it, as an installed package must be)."""
    folder = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(folder), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    return next(folder.glob("pi_conformance-*.whl"))


@builds_wheel
def test_the_zip_holds_the_scripts_the_wheel_the_rubric_and_the_held_out_set(tmp_path: Path, wheel: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(rubric_text(), encoding="utf-8")
    write_held_out(tmp_path / "private" / "nested")
    out = tmp_path / "autograder.zip"
    made = cli(
        "autograder",
        "gradescope",
        "--out",
        str(out),
        "--rubric",
        str(rubric),
        "--held-out",
        str(tmp_path / "private"),
        "--wheel",
        str(wheel),
    )
    assert made.returncode == 0, made.stderr
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        assert names == {"setup.sh", "run_autograder", wheel.name, "rubric.yaml", "held-out/nested/text-of-private.yaml"}
        for name in ("setup.sh", "run_autograder"):
            info = archive.getinfo(name)
            assert stat.S_IMODE(info.external_attr >> 16) == 0o755
            text = archive.read(name).decode()
            assert re.search(r"@[A-Z_]+@", text) is None  # every placeholder filled in
            checked = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True, timeout=30)
            assert checked.returncode == 0, checked.stderr
        assert wheel.name in archive.read("setup.sh").decode()
        assert archive.read("rubric.yaml").decode() == rubric_text()
    assert wheel.name.startswith(f"pi_conformance-{__version__}-")


@builds_wheel
def test_bad_inputs_are_refused_before_anything_is_written(tmp_path: Path, wheel: Path) -> None:
    out = tmp_path / "autograder.zip"
    write_held_out(tmp_path / "clashing", rename=False)
    clash = cli("autograder", "gradescope", "--out", str(out), "--held-out", str(tmp_path / "clashing"), "--wheel", str(wheel))
    assert clash.returncode == 2 and "also a public case" in clash.stderr
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("version: 1\nlabs: {'3.1': {weight: 10}}\nheld_out: [no-such-case]\n", encoding="utf-8")
    typo = cli("autograder", "gradescope", "--out", str(out), "--rubric", str(rubric), "--wheel", str(wheel))
    assert typo.returncode == 2 and "no-such-case" in typo.stderr
    other = tmp_path / "pi_conformance-9.9.9-py3-none-any.whl"
    shutil.copy(wheel, other)
    wrong = cli("autograder", "gradescope", "--out", str(out), "--wheel", str(other))
    assert wrong.returncode == 2 and f"this pi-conformance is {__version__}" in wrong.stderr
    assert not out.exists()


def test_results_pass_gradescopes_format_and_say_how_students_were_isolated(tmp_path: Path) -> None:
    write_held_out(tmp_path / "private")
    context = prepare(load_rubric(), held_out=tmp_path / "private")
    results = tmp_path / "results.json"
    results.write_text(
        gradescope.render(grade_submission("python:tests.support.variants:textof_mixes_in_tool_names", context), context.clauses)
    )
    assert problems(json.loads(results.read_text())) == []
    finished = finish(results, 0, None, "nobody")
    assert problems(finished) == []
    assert str(finished["output"]).rstrip().endswith(isolation_line("in-process", "nobody"))
    assert "WITHOUT the bubblewrap sandbox" in isolation_line("none", "nobody")
    assert "in the bubblewrap sandbox" in isolation_line("bwrap", "nobody")
    log = tmp_path / "log"
    log.write_text("pi-conformance grade: rubric.yaml: not a valid rubric\n", encoding="utf-8")
    failed = finish(tmp_path / "missing.json", 2, log, "nobody")
    assert problems(failed) == [] and failed["score"] == 0 and "not a valid rubric" in str(failed["output"])


def test_the_validator_catches_what_gradescope_would_not_take() -> None:
    assert problems({"tests": [{"name": "a", "score": 1, "max_score": 1, "status": "ok"}]})
    assert problems({"tests": [{"name": "a", "max_points": 1}]})
    assert problems({"tests": [{"name": "a", "score": 2, "max_score": 1}]})
    assert problems({"tests": [{"name": "a"}]}) == ["score: neither at the top nor on every test"]
    assert problems({"score": 0, "tests": [], "visibility": "sometimes"})


# -- setup.sh and run_autograder on a simulated /autograder -------------------------------------

# setup.sh installs the toolchain with npm: the tests below are marked needs_node and needs_npm.
E2E_SKIP = "not root (student code runs as nobody, which needs root to start)" if os.geteuid() != 0 else None


@dataclass
class Autograder:
    """A simulated ``/autograder`` after ``setup.sh``."""

    root: Path
    held_out_ids: list[str]
    zip_size: int
    setup_s: float
    env: dict[str, str]

    @property
    def prefix(self) -> Path:
        return self.root / "opt" / "pi-conformance"

    def grade(self, project: Path | None) -> tuple[dict[str, object], float, str]:
        """Run ``run_autograder`` on ``project`` (None: an empty submission); results.json, seconds, its output."""
        submission = self.root / "submission"
        shutil.rmtree(submission, ignore_errors=True)
        if project is None:
            submission.mkdir()
        else:
            shutil.copytree(project, submission)
        started = time.perf_counter()
        ran = subprocess.run([str(self.root / "run_autograder")], env=self.env, capture_output=True, text=True, timeout=600)
        elapsed = time.perf_counter() - started
        assert ran.returncode == 0, ran.stdout + ran.stderr
        results = json.loads((self.root / "results" / "results.json").read_text(encoding="utf-8"))
        assert problems(results) == [], ran.stdout
        return results, elapsed, ran.stdout + ran.stderr


def clean_env(root: Path, fake_bin: Path) -> dict[str, str]:
    """The environment Gradescope gives the scripts: this test's venv and checkout out of sight.

    ``fake_bin`` comes first on PATH with an ``apt-get`` and a ``curl`` that refuse and log their
    arguments: setup.sh must never change the machine that runs the tests (its install paths run
    for real in tests/autograder/test_setup_sh_chroot.py, in a throwaway root).
    """
    fake_bin.mkdir(exist_ok=True)
    for name in ("apt-get", "curl"):
        fake = fake_bin / name
        fake.write_text(f'#!/bin/sh\necho "{name} $*" >> {fake_bin / "apt.log"}\nexit 1\n', encoding="utf-8")
        fake.chmod(0o755)
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join([str(fake_bin), *(part for part in os.environ["PATH"].split(os.pathsep) if part != venv_bin)])
    keep = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PI_CONFORMANCE_TOOLCHAIN")}
    return {**keep, "PATH": path, "PI_AUTOGRADER_ROOT": str(root)}


@pytest.fixture(scope="module")
def autograder(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Iterator[Autograder]:
    if E2E_SKIP:
        pytest.skip(E2E_SKIP)
    require("needs_node", "needs_npm")
    staff = tmp_path_factory.mktemp("staff")
    (staff / "rubric.yaml").write_text(rubric_text(), encoding="utf-8")
    held_out_ids = write_held_out(staff / "held-out")
    bundle = staff / "autograder.zip"
    made = cli(
        "autograder",
        "gradescope",
        "--out",
        str(bundle),
        "--rubric",
        str(staff / "rubric.yaml"),
        "--held-out",
        str(staff / "held-out"),
        "--wheel",
        str(wheel),
    )
    assert made.returncode == 0, made.stderr
    # Under /tmp, world-traversable like Gradescope's /autograder: nobody must reach the venv and toolchain.
    root = Path(tempfile.mkdtemp(prefix="pi-autograder-", dir="/tmp"))
    root.chmod(0o755)
    try:
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(root / "source")
        for name in ("setup.sh", "run_autograder"):
            (root / "source" / name).chmod(0o755)
        shutil.copy(root / "source" / "run_autograder", root / "run_autograder")  # Gradescope copies it there
        fake_bin = tmp_path_factory.mktemp("fake-bin")
        env = clean_env(root, fake_bin)
        started = time.perf_counter()
        setup = subprocess.run(["bash", "./setup.sh"], cwd=root / "source", env=env, capture_output=True, text=True, timeout=1200)
        setup_s = time.perf_counter() - started
        assert setup.returncode == 0, setup.stdout + setup.stderr
        # Python is here, so setup.sh asked apt for nothing else than Node.js 22 (when this one is below the
        # course's floor: it then grades with this one, with a note) and bubblewrap (when it is missing).
        asked = (fake_bin / "apt.log").read_text(encoding="utf-8").splitlines() if (fake_bin / "apt.log").exists() else []
        expected = set()
        if node_versions.below_course_floor(subprocess.run(["node", "--version"], capture_output=True, text=True).stdout):
            apt = "apt-get install -y -q --no-install-recommends"
            expected |= {f"{apt} ca-certificates curl gnupg", f"{apt} nodejs npm"}
            expected |= {line for line in asked if line.startswith("curl -fsSL https://deb.nodesource.com/setup_22.x")}
            assert "grades, but is older than the course's 22.19" in setup.stderr
        if shutil.which("bwrap") is None:
            expected.add("apt-get install -y -q --no-install-recommends bubblewrap")
        assert set(asked) <= expected | {"apt-get update -q"}, asked
        yield Autograder(root, held_out_ids, bundle.stat().st_size, setup_s, env)
    finally:
        shutil.rmtree(root, ignore_errors=True)


pytestmark = pytest.mark.xdist_group("gradescope-autograder")


@needs_node
@needs_npm
@builds_wheel
def test_setup_leaves_nothing_students_may_read(autograder: Autograder) -> None:
    for private in (autograder.root / "source", autograder.prefix / "private"):
        assert stat.S_IMODE(private.stat().st_mode) == 0o700 and private.stat().st_uid == 0
    for shared in (autograder.prefix / "venv", autograder.prefix / "toolchain"):
        assert stat.S_IMODE(shared.stat().st_mode) & 0o005 == 0o005
    assert (autograder.prefix / "private" / "held-out" / "text-of-private.yaml").is_file()
    print(f"\nzip: {autograder.zip_size} bytes; setup.sh: {autograder.setup_s:.1f} s")


@needs_node
@needs_npm
@builds_wheel
def test_a_correct_submission_scores_100_with_held_out_cases_out_of_sight(autograder: Autograder, tmp_path: Path) -> None:
    # The course repository's shape: a TypeScript monorepo without node_modules, built with the toolchain.
    results, elapsed, log = autograder.grade(monorepo(tmp_path / "course-ts"))
    print(f"\nrun_autograder (correct): {elapsed:.1f} s")
    assert results["score"] == 100, log
    tests = {test["name"]: test for test in results["tests"]}  # type: ignore[attr-defined]
    held = [*autograder.held_out_ids, PUBLIC_HELD_OUT]
    assert all(tests[case_id]["visibility"] == "after_due_date" and tests[case_id]["status"] == "passed" for case_id in held)
    # Besides the held-out cases, only the per-lab "confirmed by held-out cases" tests are hidden.
    confirmations = [name for name in tests if name.endswith(": public cases confirmed by held-out cases")]
    assert all(tests[name]["visibility"] == "after_due_date" for name in confirmations)
    assert sum(test["visibility"] == "visible" for test in tests.values()) == len(tests) - len(held) - len(confirmations)
    output = str(results["output"])
    assert not any(case_id in output for case_id in held)
    assert "Isolation: your code ran as the unprivileged user nobody" in output
    assert results["extra_data"]["run_as"] == "nobody"  # type: ignore[index]


@needs_node
@needs_npm
@builds_wheel
def test_a_one_bug_submission_loses_its_labs_points(autograder: Autograder) -> None:
    results, elapsed, _ = autograder.grade(JS / "variants" / "requests-by-reference")
    print(f"\nrun_autograder (one bug): {elapsed:.1f} s")
    assert 0 < float(results["score"]) < 100  # type: ignore[arg-type]
    labs = {lab["lab"]: lab for lab in results["extra_data"]["labs"]}  # type: ignore[index]
    assert labs["4.1"]["score"] < 25 and all(labs[lab]["score"] == 25 for lab in ("3.1", "3.2", "4.2"))


@needs_node
@needs_npm
@builds_wheel
def test_a_build_that_fails_and_an_empty_submission_score_0(autograder: Autograder) -> None:
    failed, elapsed, _ = autograder.grade(JS / "variants" / "build-fails")
    print(f"\nrun_autograder (build fails): {elapsed:.1f} s")
    assert failed["score"] == 0 and failed["extra_data"]["status"] == "build-failed"  # type: ignore[index]
    empty, elapsed, _ = autograder.grade(None)
    print(f"run_autograder (empty): {elapsed:.1f} s")
    assert empty["score"] == 0 and empty["extra_data"]["status"] == "not-a-project"  # type: ignore[index]
    # One test with the reason, "start here", then one "not run" per lab: not one failed test per case.
    for results, why in ((failed, "the build failed"), (empty, "there is no project to grade")):
        tests: list[Any] = results["tests"]  # type: ignore[assignment]
        assert len(tests) == 5, [test["name"] for test in tests]
        assert tests[0]["name"] == f"start here: {why}" and str(results["output"]).startswith(f"start here: {why}")
        assert all(test["name"].endswith(": not run") for test in tests[1:])
    written = (autograder.root / "results" / "results.json").stat().st_size
    assert written < 40_000, written  # the empty submission's; a build log is bounded (BUILD_LOG_LIMIT)
    assert "error TS" in failed["tests"][0]["output"] or "npm" in failed["tests"][0]["output"]  # type: ignore[index]


def snooping_project(autograder: Autograder, folder: Path) -> Path:
    """The correct project, with a build and a module that fail loudly if they can read the autograder's secrets."""
    secrets = [
        autograder.root / "source" / "rubric.yaml",
        autograder.root / "source" / "setup.sh",
        autograder.prefix / "private" / "rubric.yaml",
        autograder.prefix / "private" / "held-out" / "text-of-private.yaml",
    ]
    assert all(os.access(path, os.R_OK) for path in secrets)  # root can: the snooping below could succeed
    project = Path(shutil.copytree(JS / "course-correct", folder / "snoop"))
    package = project / "packages" / "pi-course"
    checks = "\n".join(f'if cat "{path}" >/dev/null 2>&1; then echo "LEAKED at build: {path}"; exit 1; fi' for path in secrets)
    (package / "snoop.sh").write_text(checks + "\necho nothing readable\n", encoding="utf-8")
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["build"] = "sh ./snoop.sh"
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    types = package / "dist" / "src" / "types.js"
    reads = "\n".join(f"try {{ __snoop({json.dumps(str(path))}); __leaked.push({json.dumps(str(path))}); }} catch {{}}" for path in secrets)
    prologue = f'import {{ readFileSync as __snoop }} from "node:fs";\nconst __leaked = [];\n{reads}\n'
    prologue += 'if (__leaked.length) throw new Error("LEAKED at run: " + __leaked.join(", "));\n'
    types.write_text(prologue + types.read_text(encoding="utf-8"), encoding="utf-8")
    return project


@needs_node
@needs_npm
@builds_wheel
def test_student_code_cannot_read_the_source_or_the_held_out_set(autograder: Autograder, tmp_path: Path) -> None:
    project = snooping_project(autograder, tmp_path)
    # The snooping works where nothing stops it: graded as root, unsandboxed, with the submission's
    # own build script (a rubric that pins nothing), it leaks at build time. The autograder's rubric
    # is the default one: the grader's own tsc builds, and no script of the student's runs at all.
    pi = str(autograder.prefix / "venv" / "bin" / "pi-conformance")
    env = {**autograder.env, "PI_CONFORMANCE_TOOLCHAIN": str(autograder.prefix / "toolchain")}
    rubric = str(own_script_rubric(tmp_path))
    unguarded = subprocess.run(
        [pi, "grade", "--impl", f"pi-course:{project}", "--rubric", rubric, "--sandbox", "none"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "LEAKED at build" in unguarded.stdout
    results, _, log = autograder.grade(project)
    assert "LEAKED" not in log + json.dumps(results)
    assert results["score"] == 100, log
