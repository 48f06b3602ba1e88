"""Safe builds: the project's own npm run build with a local tsc, offline, never npx.

A type error fails the build; a folder with no course project is reported as such
without running anything; nothing is fetched, even when the project asks for it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.adapters.course_build import BuildResult
from conformance.adapters.kinds import ImplSpecError, resolve_adapter
from conformance.adapters.pi_course import NotACourseProject, build, check_course_project, pi_course_adapter
from conformance.adapters.settings import ImplSettings
from tests.support.attack_projects import MODULES, copy_project
from tests.support.build_rules import own_script
from tests.support.cli_runner import cli
from tests.support.grading_batch import FAST_TSC_OPTIONS
from tests.support.requirements import needs_bwrap, needs_node, needs_npm, needs_toolchain

NPM = shutil.which("npm")
pytestmark = [needs_node, needs_npm]
SANDBOXES = ["none", pytest.param("bwrap", marks=needs_bwrap)]
TSCONFIG = {
    "compilerOptions": {"target": "es2022", "module": "es2022", "outDir": "dist", "rootDir": ".", "strict": True, **FAST_TSC_OPTIONS},
    "include": ["src"],
}


def typescript_project(target: Path, source: str) -> Path:
    """A course project whose package builds ``src/types.ts`` with ``tsc -p .`` (no node_modules: the pinned tsc)."""
    project = copy_project(target)
    package = project / "packages" / "pi-course"
    shutil.rmtree(project / MODULES)
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["build"] = "tsc -p ."
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    (package / "tsconfig.json").write_text(json.dumps(TSCONFIG), encoding="utf-8")
    (package / "src").mkdir()
    (package / "src" / "types.ts").write_text(source, encoding="utf-8")
    return project


def built_report(project: Path, sandbox: str, settings: ImplSettings | None = None) -> str | None:
    """The failure report of building ``project`` (with ``settings``, default the grader's own build); the built copy removed."""
    built = build(project, replace(settings or ImplSettings(), sandbox=sandbox))  # type: ignore[arg-type]
    built.remove()
    return built.report


@needs_toolchain
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_type_error_is_a_build_failure(sandbox: str, tmp_path: Path) -> None:
    project = typescript_project(tmp_path / "typo", 'export const answer: number = "forty-two";\n')
    report = built_report(project, sandbox)
    assert report is not None
    assert report.startswith("tsc -p tsconfig.json exited with status 2:")
    assert "error TS2322: Type 'string' is not assignable to type 'number'" in report


@needs_toolchain
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_typescript_project_builds_with_the_pinned_compiler_into_its_own_folder(sandbox: str, tmp_path: Path) -> None:
    project = typescript_project(tmp_path / "fine", "export const answer: number = 42;\n")
    built = build(project, ImplSettings(sandbox=sandbox))  # type: ignore[arg-type]
    try:
        assert built.report is None and built.workspace is not None
        assert "answer = 42" in (built.project(project) / MODULES / "types.js").read_text(encoding="utf-8")
        assert not (project / MODULES).exists()  # the submission itself is never written to
    finally:
        built.remove()
    assert not built.workspace.root.exists()


def test_an_empty_folder_is_not_a_course_project(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NotACourseProject, match="is not a course project"):
        check_course_project(empty)
    with pytest.raises(NotACourseProject):
        pi_course_adapter(str(empty), ImplSettings(build=True, sandbox="none"))
    with pytest.raises(ImplSpecError, match="is not a course project") as raised:
        resolve_adapter(f"pi-course:{empty}", ImplSettings(build=True))
    assert isinstance(raised.value.__cause__, NotACourseProject)  # what grading maps to not-a-project
    assert build(empty) == BuildResult(None)  # nothing to build, and nothing is run


@pytest.fixture
def logging_npm(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A PATH whose npm and npx log every call before running the real ones; the log file."""
    folder, log = tmp_path / "fake-bin", tmp_path / "npm-calls.log"
    folder.mkdir()
    for name in ("npm", "npx"):
        real = shutil.which(name)
        script = folder / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\nexec {real} "$@"\n', encoding="utf-8")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    yield folder, log


def test_an_empty_folder_is_graded_without_running_npm_or_npx(tmp_path: Path, logging_npm: tuple[Path, Path]) -> None:
    folder, log = logging_npm
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": f"{folder}:{os.environ['PATH']}", "npm_config_yes": "true"}
    result = cli("grade", "--impl", f"pi-course:{empty}", "--build", "--sandbox", "none", env=env, timeout=120)
    assert "status   not-a-project: not a course project" in result.stdout, result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert not log.exists(), log.read_text(encoding="utf-8")


@pytest.fixture
def recording_registry() -> Iterator[tuple[str, list[bytes]]]:
    """A local "registry" that records every connection; its URL."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    seen: list[bytes] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(1)
                try:
                    seen.append(connection.recv(4096))
                except OSError:
                    seen.append(b"")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/", seen
    done.set()
    thread.join(timeout=2)
    server.close()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_build_that_asks_npx_for_a_package_fetches_nothing(
    sandbox: str, tmp_path: Path, recording_registry: tuple[str, list[bytes]]
) -> None:
    url, seen = recording_registry
    project = copy_project(tmp_path / "fetcher")
    package = project / "packages" / "pi-course"
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["build"] = "npx --yes cowsay hello"
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    (package / ".npmrc").write_text(f"registry={url}\n", encoding="utf-8")  # the project's own registry
    report = built_report(project, sandbox, own_script(ImplSettings()))  # the script is the attack: run it
    assert report is not None and report.startswith("npm run build exited with status")
    assert seen == []
