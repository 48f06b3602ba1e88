"""The cmd: transport: identical to in-process for a good program, robust against a bad one."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator

import pytest

from conformance.adapters.binding import BindingAdapter
from conformance.adapters.interface import Adapter, HarnessTimeout, track_abandonment
from conformance.adapters.process import ProcessAdapter
from conformance.adapters.process_options import ProcessOptions
from conformance.adapters.reference import create as reference_adapter
from conformance.common.jsontypes import JsonObject
from conformance.isolation import limits
from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite
from conformance.running.engine import run_alone
from tests.support.paths import REPO
from tests.support.requirements import costly
from tests.support.variants import VARIANTS

FAKE = str(REPO / "tests" / "support" / "fakes" / "misbehaving.py")


def fake(*modes: str, **options: float) -> ProcessAdapter:
    return ProcessAdapter(ProcessOptions([sys.executable, FAKE, *modes], env={"PYTHONPATH": str(REPO)}, **options))  # type: ignore[arg-type]


def served(impl: str) -> ProcessAdapter:
    argv = [sys.executable, "-m", "conformance.server", "--impl", impl]
    return ProcessAdapter(ProcessOptions(argv, cwd=REPO, env={"PYTHONPATH": str(REPO)}))


@pytest.fixture
def closing() -> Iterator[list[Adapter]]:
    adapters: list[Adapter] = []
    yield adapters
    for adapter in adapters:
        adapter.close()


def run_all(adapter: Adapter, suite: Suite, ids: list[str] | None = None, timeout_s: float = 1.0) -> dict[str, Outcome]:
    by_id = {case.id: case for case in suite.cases}
    cases = suite.cases if ids is None else [by_id[case_id] for case_id in ids]  # in the order given
    return {case.id: run_alone(adapter, case, timeout_s) for case in cases}


def test_reference_over_the_protocol_matches_in_process(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(remote := served("reference"))
    local = run_all(reference_adapter(), suite)
    over_wire = run_all(remote, suite)
    assert {k: v.status for k, v in over_wire.items()} == {k: v.status for k, v in local.items()}
    assert all(outcome.status == "passed" for outcome in over_wire.values())


@pytest.mark.parametrize("variant", VARIANTS[:4] + VARIANTS[9:12], ids=lambda v: v.name)
def test_broken_variant_fails_identically_over_the_protocol(variant: object, suite: Suite, closing: list[Adapter]) -> None:
    name = variant.name  # type: ignore[attr-defined]
    closing.append(remote := served(f"python:tests.support.variants:{name.replace('-', '_')}"))
    labs = {variant.lab}  # type: ignore[attr-defined]
    ids = [case.id for case in suite.cases if case.lab in labs]
    local = run_all(BindingAdapter(variant.binding, name=name), suite, ids)  # type: ignore[attr-defined]
    over_wire = run_all(remote, suite, ids)
    assert {k: (v.status, v.message) for k, v in over_wire.items()} == {k: (v.status, v.message) for k, v in local.items()}
    assert any(outcome.status == "failed" for outcome in over_wire.values())


def pick(suite: Suite, operation: str, count: int) -> list[str]:
    return [case.id for case in suite.cases if case.operation == operation][:count]


@pytest.mark.parametrize(
    ("mode", "status", "fragment"),
    [
        ("crash-on:text_of", "errored", "exited with status 3 during text_of; the end of its stderr:\nTypeError: cannot read"),
        ("garbage-on:text_of", "errored", "text_of: expected one JSON object per line but got 'this is not JSON at all'"),
        ("wrong-seq-on:text_of", "errored", "text_of: the response has seq"),
        ("bad-schema-on:text_of", "errored", "text_of: the response breaks the protocol at (root)"),
        ("huge-on:text_of", "errored", "a response line is longer than 4194304 bytes"),
        ("not-implemented-on:text_of", "skipped", "text_of is not written yet"),
        ("threw-on:text_of", "failed", "the implementation threw: TypeError: boom"),
    ],
)
def test_a_misbehaving_operation_fails_only_its_cases(mode: str, status: str, fragment: str, suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake(mode))
    ids = pick(suite, "text_of", 2) + pick(suite, "current_system_prompt", 2) + pick(suite, "scripted_model", 2)
    outcomes = run_all(adapter, suite, ids)
    for case_id in ids:
        outcome = outcomes[case_id]
        if case_id.startswith("text-of"):
            assert outcome.status == status, outcome.message
            assert fragment in outcome.message
        else:
            assert outcome.status == "passed", f"{case_id}: {outcome.message}"


@costly
def test_a_hang_is_killed_restarted_and_then_given_up(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("hang-on:text_of"))
    ids = pick(suite, "text_of", 5) + pick(suite, "make_text", 1)
    started = time.perf_counter()
    outcomes = run_all(adapter, suite, ids, timeout_s=0.3)
    assert time.perf_counter() - started < 5
    statuses = [outcomes[case_id].message for case_id in ids[:5]]
    assert statuses[:3] == ["timed out: text_of did not return within 0.3 s"] * 3
    assert all("timed out 3 times in a row" in message for message in statuses[3:])
    assert outcomes[ids[5]].status == "passed"


def test_chatter_before_the_handshake_errors_quoting_it(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("banner"))
    outcome = run_all(adapter, suite, pick(suite, "text_of", 1))
    [message] = [o.message for o in outcome.values()]
    assert "the handshake failed: the handshake: expected one JSON object per line but got 'Welcome to my implementation!'" in message


def test_a_hopeless_program_ends_in_bounded_time_with_every_case_reported(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("exit-immediately"))
    started = time.perf_counter()
    outcomes = run_all(adapter, suite)
    assert time.perf_counter() - started < 10
    assert len(outcomes) == len(suite.cases)
    assert {outcome.status for outcome in outcomes.values()} == {"errored"}
    messages = [outcome.message for outcome in outcomes.values()]
    assert "fatal: cannot load the implementation" in messages[0]
    assert "failed its handshake 3 times in a row and is not started again" in messages[-1]


@costly
def test_a_program_that_never_answers_the_handshake_is_bounded(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("hang-on-hello", handshake_timeout_s=0.3))
    started = time.perf_counter()
    outcomes = run_all(adapter, suite, pick(suite, "text_of", 10))
    assert time.perf_counter() - started < 5
    assert {outcome.status for outcome in outcomes.values()} == {"errored"}
    assert any("no answer within 0.3 s" in outcome.message for outcome in outcomes.values())


def test_a_chatty_stderr_does_not_deadlock(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("chatty-stderr"))
    outcomes = run_all(adapter, suite, pick(suite, "text_of", 3), timeout_s=5)
    assert {outcome.status for outcome in outcomes.values()} == {"passed"}


def test_handshake_labs_skip_other_labs(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("labs:3.1"))
    outcomes = run_all(adapter, suite, pick(suite, "text_of", 1) + pick(suite, "scripted_model", 1))
    statuses = sorted(outcome.status for outcome in outcomes.values())
    assert statuses == ["passed", "skipped"]
    assert any("does not support lab 4." in outcome.message for outcome in outcomes.values())


def test_a_protocol_version_mismatch_stops_at_once(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("protocol-2"))
    outcomes = run_all(adapter, suite, pick(suite, "text_of", 4))
    assert all("it speaks protocol 2, the runner speaks 1" in o.message or "not started again" in o.message for o in outcomes.values())


def test_the_program_never_sees_expected_values(suite: Suite) -> None:
    from conformance.adapters import session

    sent: list[JsonObject] = []
    original = session.Session.send

    def spy(self: session.Session, message: JsonObject) -> None:
        sent.append(message)
        original(self, message)

    session.Session.send = spy  # type: ignore[method-assign]
    try:
        adapter = served("reference")
        run_all(adapter, suite, pick(suite, "scripted_model", 3))
        adapter.close()
    finally:
        session.Session.send = original  # type: ignore[method-assign]
    steps = [step for message in sent if isinstance(listed := message.get("steps"), list) for step in listed]
    assert steps and all(isinstance(step, dict) and "expect" not in step for step in steps)


@costly
def test_cpu_limit_kills_a_spinning_program(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("spin-on:text_of", cpu_limit_s=1))
    [spinning] = pick(suite, "text_of", 1)
    [other] = pick(suite, "make_text", 1)
    outcomes = run_all(adapter, suite, [spinning, other], timeout_s=10)
    first, second = outcomes[spinning], outcomes[other]
    assert first.status == "errored" and "was killed by SIGXCPU" in first.message
    assert second.status == "passed"


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup-if-any", "rlimits-only"])
def test_memory_limit_stops_a_hungry_program(cgroups: bool, suite: Suite, closing: list[Adapter], monkeypatch: pytest.MonkeyPatch) -> None:
    if not cgroups:
        monkeypatch.setattr(limits, "detect", lambda: limits.CgroupSupport("none", (), "turned off by the test"))
    closing.append(adapter := fake("alloc-on:text_of", memory_limit_mb=300))
    [hungry] = pick(suite, "text_of", 1)
    [other] = pick(suite, "make_text", 1)
    outcomes = run_all(adapter, suite, [hungry, other], timeout_s=10)
    assert outcomes[hungry].status == "errored"
    # A memory cgroup kills the program and the supervisor says why; an address-space limit fails the allocation.
    expected = "the memory limit (300 MiB in total) was reached" if limits.detect().has("memory") else "MemoryError"
    assert expected in outcomes[hungry].message
    assert outcomes[other].status == "passed"


def test_an_operation_that_keeps_crashing_is_not_tried_again(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("crash-on:text_of"))
    ids = pick(suite, "text_of", 5) + pick(suite, "make_text", 1)
    outcomes = run_all(adapter, suite, ids)
    messages = [outcomes[case_id].message for case_id in ids]
    assert all("exited with status 3 during text_of" in message for message in messages[:3])
    assert all("exited while answering text_of 3 times in a row, so it is not tried again" in m for m in messages[3:5])
    assert all(outcomes[case_id].status == "errored" for case_id in ids[:5])
    assert outcomes[ids[5]].status == "passed"


@costly
def test_hangs_are_marked_as_such_on_the_outcome(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(hanging_handshake := fake("hang-on-hello", handshake_timeout_s=0.3))
    closing.append(crashing := fake("crash-on:text_of"))
    ids = pick(suite, "text_of", 4)
    assert all(outcome.timed_out for outcome in run_all(hanging_handshake, suite, ids).values())
    assert not any(outcome.timed_out for outcome in run_all(crashing, suite, ids).values())


@costly
def test_a_call_given_up_while_the_program_starts_is_never_sent(suite: Suite, closing: list[Adapter]) -> None:
    # A call that has to start the program (a 1 s handshake) is given up by its runner after
    # 0.3 s, as observe() does on a timeout. Once the handshake is answered, its request must
    # not be sent: it would hang and hold the adapter, and every later case would wait behind it.
    closing.append(adapter := fake("slow-hello", "hang-on:text_of"))
    [case] = [case for case in suite.cases if case.operation == "text_of"][:1]
    abandoned = threading.Event()
    raised: list[Exception] = []

    def call() -> None:
        track_abandonment(abandoned)
        try:
            adapter.perform("text_of", case.input)
        except Exception as error:
            raised.append(error)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    time.sleep(0.3)
    abandoned.set()
    worker.join(timeout=5)
    assert not worker.is_alive(), "the request was sent and hangs"
    assert [type(error) for error in raised] == [HarnessTimeout] and "given up before it was sent" in str(raised[0])
    [passing] = pick(suite, "make_text", 1)
    assert run_all(adapter, suite, [passing])[passing].status == "passed"  # the program was never sent text_of
    assert adapter.starts == 1


@costly
def test_closing_during_a_handshake_returns_at_once(suite: Suite) -> None:
    # What Ctrl-C does while a program starts: the case is given up, then the adapter closed.
    adapter = fake("slow-hello", "hang-on:text_of")
    outcome = run_all(adapter, suite, pick(suite, "text_of", 1), timeout_s=0.2)
    assert all(o.timed_out for o in outcome.values())
    started = time.perf_counter()
    adapter.close()
    assert time.perf_counter() - started < 0.9  # the handshake alone would take 1 s, the hung request minutes
    outcome = run_all(adapter, suite, pick(suite, "make_text", 1))
    assert all("is not started again: the run is closing" in o.message for o in outcome.values())


def test_a_death_while_a_module_loads_is_charged_to_the_module_once(suite: Suite, closing: list[Adapter]) -> None:
    # The program says it is loading fake-module.js, then exits: every text_of case errors with
    # that, but the program is started again only once, told not to load the module.
    closing.append(adapter := fake("crash-loading-on:text_of"))
    ids = pick(suite, "text_of", 6) + pick(suite, "make_text", 1)
    outcomes = run_all(adapter, suite, ids)
    messages = [outcomes[case_id].message for case_id in ids[:6]]
    assert "exited with status 3 during text_of while loading fake-module.js" in messages[0]
    assert "in an earlier process" not in messages[0]
    later = "exited with status 3 during text_of while loading fake-module.js (in an earlier process; the module is not loaded again"
    assert all(later in message for message in messages[1:])
    assert all(outcomes[case_id].status == "errored" for case_id in ids[:6])
    assert outcomes[ids[6]].status == "passed"
    assert adapter.starts == 2


def test_a_death_after_a_request_without_a_notice_stays_the_cases(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("crash-on:text_of"))
    outcomes = run_all(adapter, suite, pick(suite, "text_of", 2))
    assert not any("while loading" in outcome.message for outcome in outcomes.values())
    assert adapter.starts == 2


def test_a_malformed_notice_is_a_protocol_error(suite: Suite, closing: list[Adapter]) -> None:
    closing.append(adapter := fake("bad-notice-on:text_of"))
    [outcome] = run_all(adapter, suite, pick(suite, "text_of", 1)).values()
    assert outcome.status == "errored" and "a notice breaks the protocol" in outcome.message
