"""The options every command that runs an implementation shares are declared once (commands/options.py).

So every command takes them under the same name, with the same check, and ``run`` hands
its parsed values to the pytest plugin, which declares them from the same table.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

import pytest
from _pytest.config.argparsing import Parser as PytestParser

from conformance.adapters.kinds import parse_impl
from conformance.cli import build_parser, main
from conformance.commands.options import FIXTURES, TIMEOUT, process_settings
from conformance.commands.run import pytest_arguments
from conformance.commands.run_options import RUN_OPTIONS, add_run_options_to_pytest, run_values
from tests.support.cli_runner import cli_env
from tests.support.paths import REPO

#: Each command and what it needs besides the options under test.
COMMANDS = {
    "run": ["run"],
    "grade": ["grade"],
    "grade-batch": ["grade-batch", "DIR"],
    "matrix": ["matrix", "--impl", "reference", "--html", "OUT"],
    "fuzz": ["fuzz", "--impl", "reference"],
}
SHARED = ["--timeout", "--env", "--sandbox", "--cpu-limit", "--memory-limit", "--pids-limit", "--tmp-size", "--no-limits"]


def _parse(words: list[str]) -> argparse.Namespace:
    return build_parser(words).parse_args(words)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_takes_the_shared_options(command: str) -> None:
    args = _parse([*COMMANDS[command], "--timeout", "2.5", "--env", "A=b", "--sandbox", "none", "--cpu-limit", "7", "--no-limits"])
    settings = process_settings(args)
    assert args.timeout == 2.5
    assert (settings.env, settings.sandbox, settings.cpu_limit_s, settings.limits) == ({"A": "b"}, "none", 7, False)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_every_command_refuses_a_timeout_that_is_not_above_zero(capsys: pytest.CaptureFixture[str], command: str, value: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*COMMANDS[command], f"--timeout={value}"])
    assert exit_.value.code == 2
    assert "must be a finite number above 0" in capsys.readouterr().err


def _pytest_values(words: list[str]) -> dict[str, Any]:
    """What the suite's pytest plugin makes of ``words`` (a pytest command line of the table's options)."""
    parser = PytestParser(_ispytest=True)
    add_run_options_to_pytest(parser.getgroup("pi-conformance"))
    return run_values(parser.parse(words))


#: The same request, in the CLI's words and in the plugin's: a flag differs only where pytest owns the CLI's.
REQUEST = ["--fixtures", "F", "--timeout", "3", "--env", "A=b", "--env", "C=d", "--sandbox", "none", "--tmp-size", "9", "--lab", "3.1"]
REQUEST += ["--impl", "cmd:./port", "--profile", "pi-ai-1", "--no-limits", "--build", "--without-feature", "x", "--report-json", "r"]


def test_run_hands_its_parsed_values_to_the_plugin_as_the_plugin_parses_them() -> None:
    args = _parse(["run", *REQUEST])
    values = run_values(args)
    assert (values["fixtures"], values["timeout"], values["env"], values["sandbox"], values["tmp_size"]) == (
        "F",
        3.0,
        ["A=b", "C=d"],
        "none",
        9,
    )
    assert values["impl"] == parse_impl("cmd:./port") and values["limits"] is False and values["lab"] == ["3.1"]
    renamed = {option.flag: option.pytest_flag for option in RUN_OPTIONS if option.pytest_flag}
    assert _pytest_values([renamed.get(word, word) for word in REQUEST]) == values
    assert _pytest_values([]) == run_values(_parse(["run"]))  # every default in one place: the table's
    # Nothing of the table goes through pytest's command line: its text is never parsed a second time.
    flags = {flag for option in RUN_OPTIONS for flag in (option.flag, option.pytest_flag) if flag}
    assert not flags & set(pytest_arguments(args))


def test_each_option_is_declared_once_with_one_spelling() -> None:
    dests = [option.dest for option in RUN_OPTIONS]
    assert len(dests) == len(set(dests))
    assert {option.flag: option.pytest_flag for option in RUN_OPTIONS if option.pytest_flag} == {
        FIXTURES.flag: "--fixtures-dir",  # pytest's own --fixtures lists fixtures
        TIMEOUT.flag: "--case-timeout",  # pytest-timeout's --timeout
    }
    sources = [path for path in (REPO / "conformance").rglob("*.py")]
    declaring = sorted(str(path.relative_to(REPO)) for path in sources if '"--timeout"' in path.read_text(encoding="utf-8"))
    assert declaring == ["conformance/commands/options.py"]


def test_the_plugin_checks_a_timeout_as_the_commands_do() -> None:
    command = [sys.executable, "-m", "pytest", "conformance/suite", "-q", "-p", "no:cacheprovider", "--case-timeout", "0"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=cli_env(), timeout=120)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout[-2000:] + result.stderr[-2000:]
    assert "must be a finite number above 0" in result.stderr
