"""``--sandbox`` when bwrap cannot run, limits inside the sandbox, and ``--trust-python`` for in-process submissions."""

from __future__ import annotations

import sys

import pytest

from conformance.adapters.kinds import ImplSpecError, parse_impl, resolve_adapter
from conformance.adapters.settings import ImplSettings
from conformance.isolation import limits, sandbox
from conformance.loading.loader import Suite
from conformance.running.engine import run_alone
from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import needs_bwrap


def test_auto_falls_back_loudly_and_bwrap_refuses_when_bwrap_cannot_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sandbox, "probe", lambda: "bwrap is not installed (apt-get install -y bubblewrap)")
    monkeypatch.setattr(sandbox, "_warned", False)
    assert sandbox.choose_isolation("auto") == "none"
    assert "WARNING: student code runs WITHOUT a sandbox: bwrap is not installed" in capsys.readouterr().err
    assert sandbox.choose_isolation("none") == "none"
    with pytest.raises(sandbox.SandboxUnavailable, match="apt-get install -y bubblewrap"):
        sandbox.choose_isolation("bwrap")
    with pytest.raises(ImplSpecError, match="--sandbox bwrap: bwrap is not installed"):
        resolve_adapter("cmd:true", ImplSettings(sandbox="bwrap"))


def test_python_submissions_need_trust() -> None:
    assert parse_impl("python:student").trust_problem(False) is not None
    assert parse_impl("python:student").trust_problem(True) is None
    assert parse_impl("pi-course:student").trust_problem(False) is None
    assert parse_impl("reference").trust_problem(False) is None


@pytest.mark.parametrize(
    "command",
    [
        ["grade", "--impl", "python:tests.support.variants:textof_mixes_in_tool_names"],
        ["grade-batch", "tests", "--impl-template", "python:{name}"],
    ],
    ids=["grade", "grade-batch"],
)
def test_grade_refuses_python_without_trust_python(command: list[str]) -> None:
    result = cli(*command, timeout=60)
    assert result.returncode == 2
    assert "--trust-python" in result.stderr


@needs_bwrap
@pytest.mark.parametrize(
    ("mode", "limits", "fragment"),
    [
        ("spin-on:text_of", {"cpu_limit_s": 1}, "was killed by SIGXCPU"),
        # A memory cgroup kills it (the supervisor says why); an address-space limit fails the allocation.
        (
            "alloc-on:text_of",
            {"memory_limit_mb": 300},
            "the memory limit (300 MiB in total)" if limits.detect().has("memory") else "MemoryError",
        ),
    ],
    ids=["cpu", "memory"],
)
def test_limits_hold_inside_the_sandbox_and_are_reported_the_same(mode: str, limits: dict[str, int], fragment: str, suite: Suite) -> None:
    fake = REPO / "tests" / "support" / "fakes" / "misbehaving.py"
    settings = ImplSettings(env={"PYTHONPATH": str(REPO)}, sandbox="bwrap", **limits)  # type: ignore[arg-type]
    adapter = resolve_adapter(f"cmd:{sys.executable} {fake} {mode}", settings)
    assert adapter.isolation == "bwrap"
    [case] = [case for case in suite.cases if case.operation == "text_of"][:1]
    try:
        outcome = run_alone(adapter, case, 10)
    finally:
        adapter.close()
    assert outcome.status == "errored" and fragment in outcome.message
