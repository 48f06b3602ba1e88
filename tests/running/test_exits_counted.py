"""Every case is counted: what a port raises (``SystemExit(3)``, a ``KeyboardInterrupt`` of its own, ``GeneratorExit``)
errors its case, or its start, with the reason; the run goes on and its total is the cases selected.

The drill is examples/pi_ai_port with one function that calls ``sys.exit(3)`` and another that
raises ``KeyboardInterrupt``, run on the ``messages`` area: the terminal summary and the JSON
report both count every selected case. The user's own Ctrl-C still stops a start.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds import ImplSpecError, parse_impl
from conformance.common.jsontypes import JsonObject
from conformance.loading.loader import load_suite
from conformance.running.engine import Loop, Policy
from conformance.running.execution import run_case
from tests.support.cli_runner import cli
from tests.support.paths import REPO

EXITING_PORT = """\
import sys
from types import SimpleNamespace

import pi_ai_port
from conformance.adapters.pi_ai_binding import PiAiBindingAdapter


def content_text(content, separator="\\n"):
    sys.exit(3)


def get_system_message_text(message):
    raise KeyboardInterrupt


port = SimpleNamespace(**{name: getattr(pi_ai_port, name) for name in pi_ai_port.__all__})
port.content_text, port.get_system_message_text = content_text, get_system_message_text
ADAPTER = PiAiBindingAdapter(port, name="exiting-port")
"""


def test_a_port_that_exits_in_one_function_and_interrupts_in_another_loses_no_case(tmp_path: Path) -> None:
    (tmp_path / "exiting_port.py").write_text(EXITING_PORT, encoding="utf-8")
    cases = [case for case in load_suite(profile="pi-ai-1").cases if case.lab == "messages"]
    exiting = [case for case in cases if case.operation in ("content_text", "system_message_text")]
    assert 0 < len(exiting) < len(cases)
    report = tmp_path / "report.json"
    result = cli(
        *("run", "--profile", "pi-ai-1", "--lab", "messages", "--impl", "python:exiting_port:ADAPTER", "--report-json", str(report)),
        env={"PYTHONPATH": os.pathsep.join((str(REPO), str(REPO / "examples"), str(tmp_path)))},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    total = f"{len(cases)} total, {len(cases) - len(exiting)} passed, 0 failed, {len(exiting)} errored, 0 skipped"
    assert total in result.stdout, result.stdout
    assert "the implementation raised SystemExit: 3" in result.stdout and "the implementation raised KeyboardInterrupt" in result.stdout
    summary = json.loads(report.read_text(encoding="utf-8"))["summary"]
    assert summary == {"total": len(cases), "passed": len(cases) - len(exiting), "failed": 0, "errored": len(exiting), "skipped": 0}


class _OwnAdapter(Adapter):
    """A port's own Adapter: ``raised`` comes from the hook named ``where``; its text_of answers otherwise."""

    def __init__(self, where: str, raised: BaseException) -> None:
        self.where, self.raised = where, raised

    def _maybe(self, hook: str) -> None:
        if self.where == hook:
            raise self.raised

    def prepare(self, operation: str, lab: str) -> None:
        self._maybe("prepare")

    def close(self) -> None:
        self._maybe("close")

    def text_of(self, input: JsonObject) -> JsonObject:
        self._maybe("text_of")
        return {"value": "", "input_unchanged": True}


EXITS = [SystemExit(3), KeyboardInterrupt(), GeneratorExit()]


@pytest.mark.parametrize("raised", EXITS, ids=lambda error: type(error).__name__)
def test_an_exit_from_a_ports_own_prepare_errors_its_case(raised: BaseException) -> None:
    case = next(case for case in load_suite().cases if case.operation == "text_of")
    outcome = run_case(_OwnAdapter("prepare", raised), case)
    assert outcome.status == "errored" and outcome.message == f"the implementation raised {type(raised).__name__}" + (
        ": 3" if isinstance(raised, SystemExit) else ""
    )


@pytest.mark.parametrize("raised", EXITS, ids=lambda error: type(error).__name__)
def test_an_exit_from_a_ports_own_close_loses_no_outcome(raised: BaseException) -> None:
    cases = [case for case in load_suite().cases if case.operation == "text_of"][:3]
    adapter = _OwnAdapter("close", raised)
    outcomes = Loop(Policy(retry=False), lambda: adapter).run(adapter, cases)
    assert [outcome.case_id for outcome in outcomes] == [case.id for case in cases]


IMPORT_EXITS = [
    ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
    ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
    ("raise GeneratorExit('x')\n", "GeneratorExit: x"),
]


@pytest.mark.parametrize(("top_level", "said"), IMPORT_EXITS)
def test_an_exit_while_a_python_port_is_imported_is_its_start_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, top_level: str, said: str
) -> None:
    module = tmp_path / "exits_on_import.py"
    module.write_text(top_level, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImplSpecError) as raised:
        parse_impl("python:exits_on_import").adapter()
    line = top_level.count("\n")  # the raise is the module's last line
    assert str(raised.value) == f"python:exits_on_import: importing it raised {said} (at {module}:{line}); fix that module"


def test_an_exit_from_an_adapter_factory_is_its_start_failing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "exiting_factory.py").write_text("def ADAPTER():\n    raise SystemExit(4)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImplSpecError, match=r"^python:exiting_factory:ADAPTER: calling ADAPTER\(\) raised SystemExit: 4 \(at "):
        parse_impl("python:exiting_factory:ADAPTER").adapter()


def test_the_users_ctrl_c_while_a_port_is_imported_still_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A real SIGINT, delivered while the module's top level runs: the user's, not the port's.
    (tmp_path / "interrupted_import.py").write_text(f"import os, time\nos.kill({os.getpid()}, {int(signal.SIGINT)})\ntime.sleep(5)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    handler: Any = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        parse_impl("python:interrupted_import").adapter()
    assert signal.getsignal(signal.SIGINT) is handler


def test_a_task_that_exits_is_reported_once_by_its_case_not_again_by_asyncio(caplog: pytest.LogCaptureFixture) -> None:
    import asyncio
    import gc

    from conformance.adapters.event_loop import run_coroutine

    async def exits() -> None:
        raise SystemExit(3)

    async def scenario() -> None:
        asyncio.get_running_loop().create_task(exits())
        await asyncio.sleep(0.01)

    with pytest.raises(SystemExit):
        run_coroutine(scenario())  # the worker thread hands this to the case (the tests above)
    gc.collect()
    assert not [record for record in caplog.records if record.name == "asyncio"], caplog.text
