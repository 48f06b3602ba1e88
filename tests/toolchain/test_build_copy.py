"""A build runs in a throwaway copy: it never writes into the submission, and nothing it wrote stays.

Drills from issue 23: a build script that sets ``core.fsmonitor`` in the submission's
``.git/config`` (or installs a hook) would run its command in the staff's next ``git status``,
outside any sandbox. The copy has no ``.git`` and no ``node_modules`` at all, links in it are
recreated (never followed), and the submission's own compiler is never run.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance import toolchain
from conformance.adapters import course_build
from conformance.adapters.settings import ImplSettings
from conformance.isolation import submission_copy
from conformance.isolation.submission_copy import SubmissionTooLarge, copy_submission
from tests.support.attack_projects import copy_project
from tests.support.build_rules import own_script, own_script_rubric
from tests.support.cli_runner import cli
from tests.support.requirements import needs_bwrap, needs_node, needs_npm, needs_toolchain

pytestmark = [needs_node, needs_npm]
SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]


def tree_digest(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (links as their text, files as a digest), for a before/after comparison."""
    found = {}
    for folder, folders, files in os.walk(root):
        for name in (*folders, *files):
            path = Path(folder, name)
            relative = str(path.relative_to(root))
            if path.is_symlink():
                found[relative] = "link " + os.readlink(path)
            elif path.is_file():
                found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                found[relative] = "folder"
    return found


def with_build_script(project: Path, script: str) -> Path:
    package = project / "packages" / "pi-course"
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["build"] = script
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    return project


def git_repository(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)


@needs_toolchain
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_build_that_plants_a_git_hook_and_fsmonitor_changes_nothing_in_the_submission(sandbox: str, tmp_path: Path) -> None:
    project = copy_project(tmp_path / "planter")
    git_repository(project)
    attack = (
        "git config core.fsmonitor 'touch /tmp/pwned-by-student' 2>/dev/null; "
        "mkdir -p ../../.git/hooks && printf '#!/bin/sh\\ntouch /tmp/pwned' > ../../.git/hooks/post-checkout; "
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> ../../.git/config; "
        "echo planted > ../../planted.txt; echo left > /tmp/left-by-build-$$; exit 0"
    )
    with_build_script(project, attack)
    before = tree_digest(project)
    work = tmp_path / "tmp"
    work.mkdir()
    rubric = own_script_rubric(tmp_path)  # the attack is the build script: run it
    result = cli(
        "grade", "--impl", f"pi-course:{project}", "--rubric", str(rubric), "--sandbox", sandbox, env={"TMPDIR": str(work)}, timeout=300
    )
    assert "total    100.00 / 100.00" in result.stdout, result.stdout + result.stderr
    assert tree_digest(project) == before
    config = subprocess.run(["git", "-C", str(project), "config", "--get", "core.fsmonitor"], capture_output=True, text=True)
    assert config.stdout == ""
    assert list(work.iterdir()) == []  # the workspace (and what the build wrote in it) is gone


@needs_toolchain
def test_the_submissions_own_compiler_never_runs(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "own-tsc")
    package = project / "packages" / "pi-course"
    for where in (project, package):
        fake = where / "node_modules" / ".bin" / "tsc"
        fake.parent.mkdir(parents=True)
        fake.write_text("#!/bin/sh\necho 'the student compiler ran'; exit 0\n", encoding="utf-8")
        fake.chmod(0o755)
    with_build_script(project, "tsc --version")
    built = course_build.build_in_copy(project, package, shutil.which("node") or "node", course_settings())
    try:
        assert built.report is None
        copy = built.project(project)
        assert not (copy / "node_modules").exists() and not (copy / "packages" / "pi-course" / "node_modules").exists()
    finally:
        built.remove()
    log = tmp_path / "log"
    with_build_script(project, f"tsc --version > {log}")
    built = course_build.build_in_copy(project, package, shutil.which("node") or "node", course_settings())
    built.remove()
    assert log.read_text(encoding="utf-8").strip() == f"Version {toolchain.locked_versions()['typescript']}"


def course_settings() -> ImplSettings:
    """The submission's own build script runs (nothing pinned): these tests are about what a script can do."""
    return own_script(ImplSettings(sandbox="none"))


def test_links_inside_are_recreated_links_out_are_dropped_and_special_files_are_left_out(tmp_path: Path) -> None:
    source = tmp_path / "submission"
    (source / "dist" / "src").mkdir(parents=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("staff only", encoding="utf-8")
    (source / "dist" / "src" / "secret.js").symlink_to(secret)  # absolute, outside
    (source / "dist" / "climb").symlink_to("../../..")  # relative, climbs out
    (source / "dist" / "src" / "here").symlink_to(".", target_is_directory=True)
    # Lexically inside ("here/../.." is dist), but "here" is src itself: it resolves to the copy's parent.
    (source / "dist" / "src" / "sneaky").symlink_to("here/../../..")
    (source / "dist" / "src" / "types.js").write_text("export {};\n", encoding="utf-8")
    (source / "dist" / "index.js").symlink_to("src/types.js")  # inside: kept as it is
    (source / "loop").symlink_to(source, target_is_directory=True)
    os.mkfifo(source / "pipe")  # opening it to copy would block forever
    (source / ".git").mkdir()
    (source / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (source / "sub" / "node_modules").mkdir(parents=True)
    copy_submission(source, tmp_path / "copy")
    copy = tmp_path / "copy"
    assert os.readlink(copy / "dist" / "index.js") == "src/types.js"
    assert (copy / "dist" / "src" / "here").is_symlink()
    for dropped in ("dist/src/secret.js", "dist/climb", "dist/src/sneaky", "loop", "pipe", ".git", "sub/node_modules"):
        assert not os.path.lexists(copy / dropped), dropped
    assert (copy / "sub").is_dir()


def test_links_and_files_named_node_modules_or_git_never_survive_the_copy(tmp_path: Path) -> None:
    # Issue 32: a symlinked node_modules survived the copy, so the student's own tsc ran.
    source = tmp_path / "submission"
    package = source / "packages" / "pi-course"
    (source / "my-modules" / ".bin").mkdir(parents=True)
    package.mkdir(parents=True)
    (package / "node_modules").symlink_to("../../my-modules", target_is_directory=True)
    (source / "node_modules").symlink_to("my-modules", target_is_directory=True)
    (source / ".git").write_text("gitdir: /somewhere/else\n", encoding="utf-8")  # a worktree's pointer file
    copy_submission(source, tmp_path / "copy")
    copy = tmp_path / "copy"
    for dropped in ("node_modules", "packages/pi-course/node_modules", ".git"):
        assert not os.path.lexists(copy / dropped), dropped
    assert (copy / "my-modules" / ".bin").is_dir()


def test_a_submission_past_the_caps_is_not_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "big"
    source.mkdir()
    (source / "blob").write_bytes(b"x" * 2048)
    monkeypatch.setattr(submission_copy, "MAX_COPY_BYTES", 1024)
    with pytest.raises(SubmissionTooLarge, match="more than 0 MiB"):
        copy_submission(source, tmp_path / "copy")
    monkeypatch.setattr(submission_copy, "MAX_COPY_BYTES", 1 << 30)
    monkeypatch.setattr(submission_copy, "MAX_COPY_ENTRIES", 3)
    for index in range(5):
        (source / f"f{index}").touch()
    with pytest.raises(SubmissionTooLarge, match="more than 3 files"):
        copy_submission(source, tmp_path / "copy2")


def test_only_the_end_of_a_huge_build_log_is_read(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    with log.open("wb") as file:
        file.write(b"noise\n" * 1_000_000)
        file.write(b"error TS2322: the last line\n")
    text = course_build.read_tail(log)
    assert text.startswith("…") and text.endswith("error TS2322: the last line")
    assert len(text) <= course_build.OUTPUT_LIMIT_CHARS + 1


@needs_toolchain
def test_a_batch_leaves_no_build_behind_even_when_the_build_kills_its_worker(tmp_path: Path) -> None:
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    copy_project(submissions / "fine")
    # Without the sandbox a build can kill the grading worker (its ancestor): the worker then
    # cannot remove the workspace, so the batch must.
    # The build script's parent is npm, npm's the supervisor, the supervisor's the worker.
    with_build_script(copy_project(submissions / "killer"), "kill -9 $(ps -o ppid= -p $(ps -o ppid= -p $PPID)); sleep 5")
    work = tmp_path / "tmp"
    work.mkdir()
    out = tmp_path / "out"
    rubric = str(own_script_rubric(tmp_path))
    result = cli(
        "grade-batch", str(submissions), "--out", str(out), "--rubric", rubric, "--sandbox", "none", env={"TMPDIR": str(work)}, timeout=300
    )
    assert "fine" in result.stdout + result.stderr
    rows = {row["submission"]: row for row in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    assert rows["fine"]["total"] == "100.00"
    assert rows["killer"]["status"] == "crashed", rows["killer"]
    assert list(work.iterdir()) == [], sorted(str(path) for path in work.rglob("*"))[:10]


@needs_toolchain
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_build_that_fills_the_disk_is_stopped_at_the_cap(sandbox: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 23: a build wrote 3 GB to the host disk in 4 s. Here: files of 24 MiB (each under the
    # file-size limit) until stopped; the cap is lowered to 64 MiB to keep the drill small.
    monkeypatch.setattr(course_build, "MAX_BUILD_DISK_BYTES", 64 * 1024 * 1024)
    project = with_build_script(
        copy_project(tmp_path / "filler"), "for i in 1 2 3 4 5 6 7 8; do head -c 25165824 /dev/zero > big$i; sleep 0.3; done"
    )
    package = project / "packages" / "pi-course"
    settings = own_script(ImplSettings(sandbox=sandbox))  # type: ignore[arg-type]
    built = course_build.build_in_copy(project, package, shutil.which("node") or "node", settings)
    assert built.report is not None and built.report.startswith("npm run build was stopped: it wrote more than 64 MiB")
    assert built.workspace is None  # removed with what it wrote


@needs_toolchain
def test_a_build_that_makes_too_many_files_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(course_build, "MAX_BUILD_ENTRIES", 300)
    project = with_build_script(
        copy_project(tmp_path / "inodes"), "mkdir many && cd many && for i in $(seq 1 3000); do : > f$i; done; sleep 3"
    )
    package = project / "packages" / "pi-course"
    built = course_build.build_in_copy(project, package, shutil.which("node") or "node", course_settings())
    assert built.report is not None and built.report.startswith("npm run build was stopped: it wrote more than 300 files")
