"""Differential fuzzing: programs are valid cases, a divergence becomes a ready case, and every JS variant's bug is found."""

from __future__ import annotations

import copy
import importlib
import itertools
import json
import os
import re
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

import reference_impl
from conformance.adapters.binding import BindingAdapter
from conformance.adapters.interface import Adapter
from conformance.adapters.reference import create
from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.fuzz.constants import without_local_constants
from conformance.fuzz.emit import check_emitted, write_case
from conformance.fuzz.engine import Differ, fuzz
from conformance.fuzz.strategies import Program
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from reference_impl.ir import assistant_message
from reference_impl.scripted_model import finish
from tests.support.cli_runner import cli
from tests.support.js_variants import JS, ensure_generated
from tests.support.paths import REPO
from tests.support.requirements import costly, needs_node

# Per variant: the fuzzer must find the bug within this budget (issue 10: 60 s).
VARIANT_BUDGET_S = 60
SHRINK_BUDGET_S = 3


def _binding(**overrides: Any) -> BindingAdapter:
    """The reference with some functions replaced: a Python implementation with one bug."""
    names = {name: getattr(reference_impl, name) for name in reference_impl.__all__}
    return BindingAdapter(SimpleNamespace(**{**names, **overrides}), name="buggy")


@pytest.fixture
def reference() -> Iterator[BindingAdapter]:
    adapter = create()
    yield adapter
    adapter.close()


@costly
def test_the_reference_never_diverges_from_itself(reference: BindingAdapter) -> None:
    # Every drawn program becomes a case the reference passes: no implementation-defined value
    # is pinned, or this would find a "divergence" between two runs of the same code.
    differ = Differ(reference, create())
    assert fuzz(differ, seconds=60, seed=3, max_examples=400) is None
    assert differ.stats.examples == 400
    assert differ.stats.reference_failures == 0


@costly
def test_a_reference_value_that_changes_between_runs_is_dropped_not_reported(reference: BindingAdapter) -> None:
    # A "reference" whose text() stamps a counter: X (the real reference) fails its case, and
    # the case is then dropped, since the flaky side fails its own expectations on a second run.
    counter = itertools.count()

    def stamped_text(value: str) -> Any:
        return reference_impl.text(f"{value}#{next(counter)}")

    differ = Differ(_binding(text=stamped_text), reference)
    assert fuzz(differ, seconds=60, seed=0, max_examples=150) is None
    assert differ.stats.reference_failures > 0


class RecordingDiffer(Differ):
    """A Differ that keeps every program it is asked about."""

    def __init__(self, reference: Adapter, implementation: Adapter) -> None:
        super().__init__(reference, implementation)
        self.programs: list[tuple[str, object, object]] = []

    def diverges(self, program: Program) -> tuple[Case, Outcome] | None:
        self.programs.append((program.operation, copy.deepcopy(program.input), copy.deepcopy(program.steps)))
        return super().diverges(program)


def test_the_programs_drawn_depend_on_the_seed_not_on_what_the_process_imported(tmp_path: Path, reference: BindingAdapter) -> None:
    # Hypothesis mixes literals from the caller's own modules into its draws; a module full of
    # new literals, imported between two runs with the same seed, must change nothing.
    def drawn() -> list[tuple[str, object, object]]:
        differ = RecordingDiffer(reference, create())
        assert fuzz(differ, seconds=60, seed=7, max_examples=120) is None
        return differ.programs

    before = drawn()
    probe = tmp_path / "probe_constants.py"
    literals = [f'"probe-{n}"' for n in range(300)] + [str(1_000_003 + n) for n in range(300)]
    probe.write_text(f"VALUES = [{', '.join(literals)}]\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module("probe_constants")
        after = drawn()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("probe_constants", None)
    assert len(after) == len(before) == 120
    assert after == before


def test_overlapping_fuzz_runs_put_hypothesis_back_as_it_was() -> None:
    # Two blocks in two threads, the first leaving while the second is inside: the second
    # still draws without local constants, and once both left Hypothesis is as it was.
    from hypothesis.internal.conjecture import providers

    real = providers._get_local_constants
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with without_local_constants():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with without_local_constants():
            second_in.set()
            first_out.wait(10)
            seen.append(providers._get_local_constants is not real)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert seen == [True]
    assert providers._get_local_constants is real


@costly
def test_a_python_bug_becomes_a_ready_case(tmp_path: Path, reference: BindingAdapter) -> None:
    def text_of_trimmed(message: Any) -> str:
        return str(reference_impl.text_of(message)).strip()

    buggy = _binding(text_of=text_of_trimmed)
    finding = fuzz(Differ(reference, buggy), seconds=30, seed=0, shrink_seconds=5)
    assert finding is not None
    case = finding.case
    # The prefix of the bundled text_of ids: the case can move into ch03/text-of.yaml as it is.
    assert re.fullmatch(r"text-of-fuzz-[0-9a-f]{8}", case.id)
    assert case.lab == "3.1" and "IR-TEXT-1" in case.clauses
    path = write_case(case, tmp_path)
    assert path == tmp_path / "ch03" / f"{case.id}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["cases"][0]["expect"]["value"] != finding.outcome.observation["value"]  # type: ignore[index]
    check = check_emitted(path, case.id, reference, buggy)
    assert check.ok, check


def test_a_shrunk_case_keeps_no_step_its_divergence_does_not_need(reference: BindingAdapter) -> None:
    # A ScriptedModel whose exhausted error says something else: changing the context after a
    # call has nothing to do with it, so no shrunk case may keep a mutate_context step.
    class WrongExhaustedMessage(reference_impl.ScriptedModel):
        def _produce(self, stream: Any, turn: Any, signal: Any) -> None:
            if turn is None and not (signal is not None and signal.aborted):
                finish(stream, assistant_message([], "error", {"errorMessage": "no more turns"}))
            else:
                super()._produce(stream, turn, signal)

    for seed in range(3):
        finding = fuzz(Differ(reference, _binding(ScriptedModel=WrongExhaustedMessage)), seconds=30, seed=seed, shrink_seconds=10)
        assert finding is not None and finding.case.operation == "scripted_model", seed
        actions = [step["action"] for step in finding.program.steps]
        assert "mutate_context" not in actions, (seed, actions)


def test_implementation_defined_values_become_matchers(reference: BindingAdapter) -> None:
    from conformance.fuzz.expect import expectations

    program = Program("make_assistant_message", {"content": [], "overrides": {"model": "m"}})
    observation = reference.make_assistant_message(program.input)
    expect, _ = expectations(program, observation)
    assert expect is not None
    value = expect["value"]
    assert isinstance(value, dict)
    assert value["model"] == "m" and value["provider"] == {"$type": "string"} and value["timestamp"] == {"$type": "number"}


def _variants() -> list[str]:
    measured = json.loads((JS / "variants.json").read_text(encoding="utf-8"))
    return [
        name.split("/", 1)[1]
        for name, entry in measured.items()
        if isinstance(entry, dict) and "failing_case" in entry and entry.get("fuzz", True)
    ]


def _fuzz_variant(name: str, emit: Path) -> tuple[str, int, str]:
    args = ["fuzz", "--impl", f"pi-course:tests/support/js/variants/{name}", "--seconds", str(VARIANT_BUDGET_S)]
    done = cli(*args, "--shrink-seconds", str(SHRINK_BUDGET_S), "--emit", str(emit / name), timeout=VARIANT_BUDGET_S + 120)
    return name, done.returncode, done.stdout + done.stderr


@needs_node
def test_fuzz_finds_every_js_variant_bug(tmp_path: Path) -> None:
    """Each one-bug variant diverges within its budget, and the emitted case lints, passes the reference and fails the variant.

    Two at a time (this machine has two cores; each run is one Python and one Node.js
    process): about a minute for the ten variants, each found within a few seconds.
    """
    ensure_generated()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda name: _fuzz_variant(name, tmp_path), _variants()))
    failures = []
    for name, code, output in results:
        found = re.search(r"divergence after ([0-9.]+) s", output)
        checked = re.search(r"check: fixtures lint clean, reference passed, \S+ failed", output)
        if code != 1 or found is None or float(found.group(1)) > VARIANT_BUDGET_S or checked is None:
            failures.append(f"{name} (exit {code}):\n{output[-1500:]}")
    assert not failures, "\n\n".join(failures)


def test_an_examples_budget_makes_a_run_the_same_on_any_machine() -> None:
    # A time budget alone draws as many programs as the machine manages; --examples bounds the count.
    result = cli("fuzz", "--impl", "reference", "--seconds", "600", "--examples", "25", "--seed", "5", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no divergence from the reference in 25 programs" in result.stdout


def test_fuzz_has_an_extra_of_its_own_and_says_so_when_hypothesis_is_missing(tmp_path: Path) -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(requirement.startswith("hypothesis") for requirement in extras["fuzz"])
    assert "pi-conformance[fuzz]" in extras["dev"] and not any(requirement.startswith("hypothesis") for requirement in extras["dev"])
    # A hypothesis that cannot be imported, ahead of the installed one on the path: as if it were not installed.
    shadow = tmp_path / "hypothesis"
    shadow.mkdir()
    missing = "raise ModuleNotFoundError(\"No module named 'hypothesis'\", name='hypothesis')\n"
    (shadow / "__init__.py").write_text(missing, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "fuzz", "--impl", "reference", "--examples", "1"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    # The command that works where this copy runs (a checkout here; tests/cli/test_install_hints.py has the others).
    from conformance.common import install_hints

    assert install_hints.extra_command("fuzz") in line and "[dev]" not in line, line


def test_fuzz_can_say_the_suite_already_fails_the_implementation(reference: BindingAdapter) -> None:
    from conformance.commands.fuzz import suite_failures

    def text_of_trimmed(message: Any) -> str:
        return str(reference_impl.text_of(message)).strip()

    assert suite_failures(lambda: reference) == []
    known = suite_failures(lambda: _binding(text_of=text_of_trimmed))
    assert known and all(case_id.startswith("text-of-") for case_id in known), known


def test_the_suite_failures_are_run_by_the_engine_so_given_up_cases_are_retried() -> None:
    from conformance.adapters.interface import GaveUp
    from conformance.commands.fuzz import suite_failures

    started: list[BindingAdapter] = []

    class GivesUpFirst(BindingAdapter):
        """The first adapter gives text_of up, as a process adapter does after timeouts; a fresh one answers."""

        def text_of(self, input: Any) -> Any:
            if self is started[0]:
                raise GaveUp("not run: text_of timed out 3 times in a row")
            return super().text_of(input)

    def fresh() -> BindingAdapter:
        started.append(GivesUpFirst(reference_impl, name="gives-up-first"))
        return started[-1]

    # Each given-up case passes when retried alone: run would report none of them, so neither does fuzz.
    assert suite_failures(fresh) == [] and len(started) > 1


def test_a_message_the_divergence_does_not_need_is_dropped(reference: BindingAdapter) -> None:
    # A current_system_prompt that takes the first system message, not the last: the user
    # message between the two system messages plays no part in the divergence.
    from conformance.fuzz.engine import without_unneeded_messages

    def first_system_prompt(messages: Any) -> Any:
        systems = [message for message in messages if message.get("role") == "system"]
        return reference_impl.system_message_text(systems[0]) if systems else None

    differ = Differ(reference, _binding(current_system_prompt=first_system_prompt))
    system: JsonObject = {"role": "system", "content": "", "timestamp": 0}
    messages: list[JsonValue] = [
        {**system, "content": "旧"},
        {"role": "user", "content": [{"type": "text", "text": "问"}], "timestamp": 1},
        {**system, "content": "新"},
    ]
    program = Program("current_system_prompt", {"messages": messages})
    found = differ.diverges(program)
    assert found is not None
    shrunk, (case, _) = without_unneeded_messages(differ, program, found)
    kept = shrunk.input["messages"]
    assert isinstance(kept, list)
    assert [message["role"] if isinstance(message, dict) else message for message in kept] == ["system", "system"]
    assert case.input == shrunk.input
