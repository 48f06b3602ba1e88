"""The options every command that runs an implementation shares are declared once (commands/options.py).

So every command takes them under the same name, with the same check, and ``run`` passes
them on to the pytest plugin, which declares them from the same table.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from conformance.cli import build_parser, main
from conformance.commands.options import ENV, FIXTURES, SANDBOX, TIMEOUT, process_settings
from conformance.commands.run import pytest_arguments
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


def test_run_passes_the_shared_options_on_under_the_plugins_names() -> None:
    args = _parse(["run", "--fixtures", "F", "--timeout", "3", "--env", "A=b", "--env", "C=d", "--sandbox", "none", "--tmp-size", "9"])
    argv = pytest_arguments(args)
    for option, value in (("--fixtures-dir", "F"), ("--case-timeout", "3.0"), ("--env", "A=b"), ("--env", "C=d")):
        assert [option, value] in [argv[index : index + 2] for index in range(len(argv))]
    assert argv[argv.index("--sandbox") + 1] == "none" and argv[argv.index("--tmp-size") + 1] == "9"
    assert {FIXTURES.plugin_flag, TIMEOUT.plugin_flag, ENV.plugin_flag, SANDBOX.plugin_flag} <= set(argv)


def test_the_plugin_checks_a_timeout_as_the_commands_do() -> None:
    command = [sys.executable, "-m", "pytest", "conformance/suite", "-q", "-p", "no:cacheprovider", "--case-timeout", "0"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=cli_env(), timeout=120)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout[-2000:] + result.stderr[-2000:]
    assert "must be a finite number above 0" in result.stderr
