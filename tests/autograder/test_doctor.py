"""``pi-conformance doctor``: each check, its fix, and the exit status with things present and missing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import cli
from conformance.autograder import doctor
from conformance.isolation import sandbox
from conformance.toolchain import node_versions
from tests.support.requirements import needs_bwrap


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    """The sandbox probe is cached per process: forget it before and after a test that changes what it sees."""
    sandbox.probe.cache_clear()
    yield
    sandbox.probe.cache_clear()


@needs_bwrap
def test_sandbox_present_and_working() -> None:
    check = doctor.check_sandbox()
    assert check.ok and check.required and "bubblewrap works here" in check.found and check.fix is None


def test_sandbox_absent_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, fresh_probe: None, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    check = doctor.check_sandbox()
    assert not check.ok and check.fix == sandbox.INSTALL_HINT and "not installed" in check.found
    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert f"fix: {sandbox.INSTALL_HINT}" in out and "NOT ready to grade" in out


def test_sandbox_installed_but_refused_says_why_and_what_to_do() -> None:
    check = doctor.check_sandbox(lambda: "bwrap does not work here (user namespaces disabled?): setting up uid map: Permission denied")
    if sandbox.find_bwrap() is None:
        pytest.skip("bwrap is not installed")
    assert not check.ok and "Permission denied" in check.found
    assert check.fix is not None and "user namespaces" in check.fix and "--sandbox none" in check.fix


def test_node_missing_from_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    check = doctor.check_node()
    assert not check.ok and check.found.startswith("not found on PATH") and "the course's floor: 22.19+" in check.found
    assert check.fix == "install Node.js 22.x with npm (https://nodejs.org, or NodeSource's apt repository setup_22.x)"


def _node_reporting(version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> doctor.Check:
    for name, says in (("node", version), ("npm", "10.9.0")):
        fake = tmp_path / name
        fake.write_text(f"#!/bin/sh\necho {says}\n", encoding="utf-8")
        fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    return doctor.check_node()


@pytest.mark.parametrize("version", ["v18.20.4", "v19.9.0", "v21.7.3", "v22.18.0"])
def test_a_node_the_adapters_cannot_confine_is_refused_for_lack_of_the_permission_model(
    version: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from conformance.adapters.pi_course import MINIMUM_NODE

    assert MINIMUM_NODE == node_versions.MINIMUM_MAJOR == 20  # one constant owns the number
    check = _node_reporting(version, tmp_path, monkeypatch)
    assert not check.ok and f"{version} at" in check.found and "needs Node.js 20.x or 22.19+" in check.found
    assert "permission model" in check.found


def test_node_20_grades_with_a_note_that_the_course_asks_for_22_19(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    check = _node_reporting("v20.20.2", tmp_path, monkeypatch)
    assert check.ok and "older than the course's 22.19" in check.found


@pytest.mark.parametrize("version", ["v22.19.0", "v22.20.1", "v24.3.0"])
def test_node_at_the_courses_floor_or_newer_is_clean(version: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    check = _node_reporting(version, tmp_path, monkeypatch)
    assert check.ok and "older" not in check.found and "npm 10.9.0" in check.found


def test_the_toolchain_locks_types_node_of_the_courses_major() -> None:
    from conformance import toolchain

    assert toolchain.locked_versions()["@types/node"].split(".")[0] == str(node_versions.TYPES_NODE_MAJOR)


def test_chromium_is_optional() -> None:
    checks = [doctor.Check("needed", True, "here"), doctor.Check("Chromium", False, "not found", doctor.CHROMIUM_FIX, required=False)]
    assert doctor.ready(checks)
    screen = doctor.render(checks)
    assert "ready to grade" in screen and "NOT" not in screen and f"fix: {doctor.CHROMIUM_FIX}" in screen
    assert not doctor.ready([*checks, doctor.Check("toolchain", False, "missing", "pi-conformance toolchain install")])


def test_limits_are_described_as_every_report_describes_them() -> None:
    from conformance.isolation import limits, sandbox

    check = doctor.check_limits()
    assert check.required is False
    assert check.found == limits.describe(limits.Limits(), tmpfs_capped=sandbox.probe() is None)
    assert check.ok == (not check.found.startswith("rlimits only")) and (check.fix is None) == check.ok


def test_toolchain_absent_names_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PI_CONFORMANCE_TOOLCHAIN", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    check = doctor.check_toolchain()
    assert not check.ok and check.required and check.fix == "pi-conformance toolchain install"
    assert str(tmp_path / "empty") in check.found
    assert not doctor.ready(doctor.run_checks())


def test_toolchain_present_shows_its_versions() -> None:
    from conformance import toolchain

    status = toolchain.status()
    if not status.installed:
        pytest.skip(f"the toolchain is not installed here: {status.problem}")
    check = doctor.check_toolchain()
    assert check.ok and f"typescript {status.versions['typescript']}" in check.found and str(status.folder) in check.found


def test_doctor_prints_one_screen_and_exits_0_when_ready(capsys: pytest.CaptureFixture[str]) -> None:
    checks = doctor.run_checks()
    if not doctor.ready(checks):
        pytest.skip("this machine lacks something grading needs: " + "; ".join(c.found for c in checks if c.required and not c.ok))
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[1] for line in out.splitlines()[:6]] == ["Python", "Node.js", "toolchain", "sandbox", "limits", "Chromium"]
    assert out.rstrip().endswith("pi-conformance doctor: ready to grade")
