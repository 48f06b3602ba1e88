"""The pinned toolchain: where it lives, what says it is installed, and installs that cannot half-succeed."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from conformance import toolchain
from tests.support.cli_runner import cli
from tests.support.requirements import needs_node


def fake_npm(folder: Path, script: str) -> str:
    """An ``npm`` executable that runs ``script`` (sh) in its working folder."""
    npm = folder / "npm"
    npm.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    return str(npm)


#: What ``npm ci`` leaves behind, minimally: the tsc command and each package's manifest.
_INSTALLS = (
    "mkdir -p node_modules/.bin node_modules/typescript node_modules/@types/node && touch node_modules/.bin/tsc && "
    'echo \'{"version": "7.0.2"}\' > node_modules/typescript/package.json && '
    'echo \'{"version": "22.20.7"}\' > node_modules/@types/node/package.json && echo ran >> "$CALLS"'
)


def test_the_lock_pins_the_courses_native_compiler_and_node_types() -> None:
    versions = toolchain.locked_versions()
    assert versions["typescript"].startswith("7.")
    assert versions["@types/node"] not in ("?", "")
    manifest = json.loads((toolchain.LOCK_FOLDER / "package.json").read_text(encoding="utf-8"))
    assert set(manifest["devDependencies"]) == {"typescript", "@types/node"}


def test_the_folder_is_the_env_override_else_the_xdg_cache_by_lock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(toolchain.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert toolchain.folder() == tmp_path / "cache" / "pi-conformance" / "toolchain" / toolchain.lock_id()
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    assert toolchain.folder() == Path.home() / ".cache" / "pi-conformance" / "toolchain" / toolchain.lock_id()
    monkeypatch.setenv(toolchain.ENV_VAR, str(tmp_path / "mine"))
    assert toolchain.folder() == tmp_path / "mine"


def test_a_missing_toolchain_is_one_line_that_names_the_command(tmp_path: Path) -> None:
    found = toolchain.status(tmp_path)
    assert not found.installed
    assert found.problem is not None and "\n" not in found.problem
    assert f"run `{toolchain.INSTALL_COMMAND}`" in found.problem
    result = cli("toolchain", "status", "--dir", str(tmp_path))
    assert result.returncode == 1
    assert "not ready" in result.stdout and toolchain.INSTALL_COMMAND in result.stdout


def test_a_toolchain_of_another_lock_is_not_installed(tmp_path: Path) -> None:
    (tmp_path / "node_modules" / ".bin").mkdir(parents=True)
    (tmp_path / "node_modules" / ".bin" / "tsc").touch()
    (tmp_path / toolchain.STAMP).write_text("0123456789ab\n", encoding="utf-8")
    found = toolchain.status(tmp_path)
    assert not found.installed and found.problem is not None and "an older lock" in found.problem


def test_install_runs_npm_ci_once_then_is_a_no_op(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = tmp_path / "calls"
    monkeypatch.setenv("CALLS", str(calls))
    npm = fake_npm(tmp_path, _INSTALLS)
    where = tmp_path / "cache" / "toolchain"
    found = toolchain.install(where, npm)
    assert found.installed and found.problem is None
    assert found.versions == {"typescript": "7.0.2", "@types/node": "22.20.7"}
    assert (where / "package-lock.json").read_bytes() == (toolchain.LOCK_FOLDER / "package-lock.json").read_bytes()
    assert stat.S_IMODE(where.stat().st_mode) == 0o755  # other users (--run-as) can use it
    toolchain.install(where, npm)
    assert calls.read_text(encoding="utf-8").split() == ["ran"]
    assert [path.name for path in where.parent.iterdir()] == ["toolchain"]  # no staging folder left


def test_a_failed_install_leaves_nothing_that_looks_installed(tmp_path: Path) -> None:
    npm = fake_npm(tmp_path, "mkdir -p node_modules/.bin && touch node_modules/.bin/tsc && echo 'npm error network down' >&2; exit 1")
    where = tmp_path / "cache" / "toolchain"
    with pytest.raises(toolchain.ToolchainMissing, match="npm ci failed \\(status 1\\): npm error network down"):
        toolchain.install(where, npm)
    assert not toolchain.status(where).installed
    assert list(where.parent.iterdir()) == []


def test_install_without_npm_names_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(toolchain.ToolchainMissing, match=r"npm is not on PATH: install Node\.js"):
        toolchain.install(tmp_path / "t")


@needs_node  # the build finds Node.js before it looks for the toolchain
def test_a_build_without_the_toolchain_fails_in_one_line_naming_the_command(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text('{"scripts": {"build": "tsc"}}', encoding="utf-8")
    env = {toolchain.ENV_VAR: str(tmp_path / "empty"), "PATH": os.environ["PATH"]}
    result = cli("grade", "--impl", f"pi-course:{project}", "--sandbox", "none", env=env, timeout=120)
    assert result.returncode == 1
    missing = f"the pinned TypeScript toolchain is not installed in {tmp_path / 'empty'}"
    assert f"status   build-failed: tsc -p tsconfig.json could not run: {missing}" in result.stdout
    assert toolchain.INSTALL_COMMAND in result.stdout
