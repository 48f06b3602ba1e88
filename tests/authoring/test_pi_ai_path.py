"""The pi-ai-1 path works as printed: `fixtures new` names a working --impl, the scaffold has the
course's skeleton with deterministic chunking, the mismatch advice fits each profile, and every
feature a case names is in spec/features.yaml (issue 28)."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest

from conformance.adapters.kinds import impl_examples
from conformance.authoring import next_steps
from conformance.authoring.lint import lint
from conformance.model.profiles import PI_AI_1, PROFILES, mismatch_message
from tests.support.cli_runner import cli
from tests.support.fixture_scratch import DEFAULT_PICKS, run_fixtures, scratch

PLAYBACK = "pi-ai-1/faux-playback.yaml"
ERRORS = "pi-ai-1/faux-errors.yaml"
PICKS = {**DEFAULT_PICKS, PLAYBACK: ["pa-faux-text-one-chunk"], ERRORS: ["pa-faux-error-step-played-then-error"]}


def next_lines(err: str) -> list[str]:
    return [line.strip() for line in err.splitlines()[1:] if line.startswith("  ")]


def test_new_names_a_working_impl_and_the_printed_command_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No upstream package here: the printed command uses the port in examples/, which passes every case.
    monkeypatch.setattr(next_steps, "upstream_package", lambda profile: None)
    root = scratch(tmp_path, PICKS)
    code, _, err = run_fixtures(
        capsys, "new", "--fixtures", str(root), "--profile", "pi-ai-1", "--operation", "faux_provider", "--file", PLAYBACK
    )
    assert code == 0, err
    lint_line, run_line = next_lines(err)
    assert lint_line == f"pi-conformance fixtures lint --fixtures {root}"
    assert "--profile pi-ai-1 --impl python:pi_ai_port.conformance:ADAPTER" in run_line and run_line.startswith("PYTHONPATH=")
    # As printed, on a finished case of the same folder (the new one still holds TODOs).
    words = shlex.split(run_line.replace(run_line.rsplit(" ", 1)[1], "pa-faux-text-one-chunk"))
    env = dict(word.split("=", 1) for word in words if "=" in word and not word.startswith("-"))
    command = [word for word in words if word not in {f"{key}={value}" for key, value in env.items()}]
    assert command[0] == "pi-conformance"
    result = cli(*command[1:], env=env, timeout=120)
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr


def test_with_the_upstream_package_installed_the_command_names_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    package = tmp_path / "pi-ai"
    (package / "node_modules" / "@earendil-works" / "pi-ai").mkdir(parents=True)
    (package / "node_modules" / "@earendil-works" / "pi-ai" / "package.json").write_text('{"name": "@earendil-works/pi-ai"}')
    monkeypatch.setenv("PI_AI_PACKAGE_DIR", str(package))
    assert next_steps.run_commands("pi-ai-1", "pa-x") == [f"pi-conformance run --profile pi-ai-1 --impl pi-ai:{package} -k pa-x"]
    assert next_steps.run_commands("course", "x") == ["pi-conformance run -k x"]


def test_each_profile_is_told_of_its_own_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A pi-ai package is no pi-agent-core implementation: each profile looks for its own, from its registry entry.
    package = tmp_path / "pi-ai"
    (package / "node_modules" / "@earendil-works" / "pi-ai").mkdir(parents=True)
    (package / "node_modules" / "@earendil-works" / "pi-ai" / "package.json").write_text('{"name": "@earendil-works/pi-ai"}')
    monkeypatch.setenv("PI_AI_PACKAGE_DIR", str(package))
    monkeypatch.setenv("PI_AGENT_CORE_PACKAGE_DIR", str(tmp_path / "nothing"))
    monkeypatch.setattr(next_steps, "data_root", lambda: tmp_path)  # no .cache, no examples/
    assert next_steps.package_variable("pi-agent-core-1") == "PI_AGENT_CORE_PACKAGE_DIR"
    if not Path("/tmp/pi-agent-core").exists():
        install, run = next_steps.run_commands("pi-agent-core-1", "pac-x")
        assert install == "npm install --prefix /tmp/pi-agent-core @earendil-works/pi-agent-core@1.6.0"
        assert run == "pi-conformance run --profile pi-agent-core-1 --impl pi-agent-core:/tmp/pi-agent-core -k pac-x"


def test_the_scaffold_has_the_skeleton_and_deterministic_chunking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = scratch(tmp_path, PICKS)
    run_fixtures(capsys, "new", "--fixtures", str(root), "--profile", "pi-ai-1", "--operation", "faux_provider", "--file", PLAYBACK)
    text = (root / PLAYBACK).read_text(encoding="utf-8")
    scaffold = text.split("\n- id: ")[-1]  # the case appended last
    assert "tokenSize: {min: 4, max: 4}" in scaffold
    assert "- action: stream" in scaffold and "- action: consume" in scaffold and "finished: true" in scaffold
    # Only placeholders are left to fill in: no schema noise.
    problems = lint(root, extra=True)
    assert problems and all("placeholder left by `fixtures new`" in p.message for p in problems), [str(p) for p in problems]


def test_the_file_list_names_each_files_topic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = scratch(tmp_path, PICKS)
    code, _, err = run_fixtures(capsys, "new", "--fixtures", str(root), "--profile", "pi-ai-1", "--operation", "faux_provider")
    assert code != 0
    assert "fixtures/pi-ai-1/faux-playback.yaml  (faux provider playback)" in err, err


@pytest.mark.parametrize(
    ("implemented", "wanted", "advice", "not_advised"),
    [
        ("course", "pi-ai-1", "--impl pi-ai:PATH", "--profile course"),
        ("pi-ai-1", "course", "--impl reference", "run it with --profile course"),
    ],
)
def test_the_mismatch_advice_fits_each_profile(implemented: str, wanted: str, advice: str, not_advised: str) -> None:
    message = mismatch_message("impl", implemented, wanted, impl_examples(wanted))
    assert advice in message and not_advised not in message, message


def test_lint_checks_a_profiles_features_against_its_registry_entry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    root = scratch(tmp_path, PICKS)
    assert lint(root, extra=True) == []
    narrowed = dataclasses.replace(PI_AI_1, features=("messages", "event-streams"))
    monkeypatch.setitem(PROFILES, PI_AI_1.name, narrowed)
    messages = [str(problem) for problem in lint(root, extra=True)]
    assert any("pa-faux-text-one-chunk: features: unknown feature 'faux-provider' of profile pi-ai-1" in m for m in messages), messages
