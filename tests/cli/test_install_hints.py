"""What an "install this" message says: the command that works where this copy runs (checkout, venv, pipx)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.common import install_hints
from tests.support.paths import REPO


def test_a_checkout_installs_the_extra_editable_from_itself() -> None:
    assert install_hints.checkout_root() == REPO
    assert install_hints.extra_command("fuzz") == f"{sys.executable} -m pip install -e '{REPO}[fuzz]'"


def test_a_venv_from_the_wheel_installs_the_extras_requirements_with_its_own_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install_hints, "checkout_root", lambda: None)
    monkeypatch.setattr(sys, "prefix", "/home/staff/grading-venv")
    assert install_hints.extra_command("fuzz") == f"{sys.executable} -m pip install 'hypothesis>=6.100'"


def test_a_pipx_install_injects_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install_hints, "checkout_root", lambda: None)
    monkeypatch.setattr(sys, "prefix", str(Path("/home/student/.local/share/pipx/venvs/pi-conformance")))
    assert install_hints.extra_command("fuzz") == "pipx inject pi-conformance 'hypothesis>=6.100'"


def test_the_requirements_are_the_ones_pyproject_declares() -> None:
    assert install_hints.extra_requirements("fuzz") == ["hypothesis>=6.100"]
    assert 'fuzz = ["hypothesis>=6.100"]' in (REPO / "pyproject.toml").read_text(encoding="utf-8")
