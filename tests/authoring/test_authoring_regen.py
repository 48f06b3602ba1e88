"""``fixtures regen``: a reviewed diff from the reference; writes only with --write, keeps matchers and aliases."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conformance.adapters.reference import create
from conformance.authoring.lint import lint
from conformance.loading.loader import load_suite
from conformance.running.engine import run_alone
from conformance.yamlio import edit as textedit
from conformance.yamlio import positions as yamltext
from tests.support.fixture_scratch import DEFAULT_PICKS, run_fixtures, scratch

TEXT_OF = "text-of-fault-experiment-tool-name-excluded"
EXHAUST = "sm-exhaust-result-without-consume-resolves"
ABORT = "sm-abort-pre-aborted-single-error-next-call-plays-next-turn"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The default scratch cases plus a scenario whose expectations use anchors and aliases."""
    return scratch(tmp_path, {**DEFAULT_PICKS, "ch04/aborts.yaml": [ABORT]})


def seed(path: Path, old: str, new: str) -> None:
    """Plant a wrong expectation (what a stale fixture looks like)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def regen(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    return run_fixtures(capsys, "regen", "--fixtures", str(root), *args)


def test_regen_shows_a_diff_and_writes_only_with_write(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = root / "ch03" / "text-of.yaml"
    seed(path, 'value: "先读取\\n再回答"', 'value: "先读取\\nread\\n再回答"')
    stale = path.read_text(encoding="utf-8")
    code, diff, err = regen(capsys, root, TEXT_OF)
    assert code == 0, err
    assert diff.startswith("--- a/fixtures/ch03/text-of.yaml\n+++ b/fixtures/ch03/text-of.yaml\n")
    changed = [line for line in diff.splitlines()[2:] if line[:1] in "+-"]
    assert changed == ['-      value: "先读取\\nread\\n再回答"', '+      value: "先读取\\n再回答"']
    assert "re-run with --write" in err and path.read_text(encoding="utf-8") == stale

    code, _, err = regen(capsys, root, TEXT_OF, "--write")
    assert code == 0 and "wrote " in err
    assert path.read_text(encoding="utf-8") == stale.replace('value: "先读取\\nread\\n再回答"', 'value: "先读取\\n再回答"')
    assert lint(root) == []
    # Nothing left to regenerate.
    code, diff, err = regen(capsys, root, TEXT_OF)
    assert (code, diff) == (0, "") and "already matches the reference" in err


def test_matchers_the_new_value_satisfies_are_kept(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = root / "ch04" / "exhaustion.yaml"
    seed(path, 'errorMessage: "ScriptedModel 没有更多响应"', 'errorMessage: "no more turns"')
    # A matcher the reference's value no longer satisfies gives way to the concrete value.
    seed(path, "provider: {$type: string}", "provider: {$type: number}")
    code, diff, err = regen(capsys, root, EXHAUST, "--write")
    assert code == 0, err
    [removed] = [line for line in diff.splitlines() if line.startswith("-  ")]
    [added] = [line for line in diff.splitlines() if line.startswith("+  ")]
    assert "provider: {$type: number}" in removed and "provider: scripted, model: {$type: string}" in added
    assert "usage: {input: {$type: number}, output: {$type: number}, totalTokens: {$type: number}}" in added
    assert 'errorMessage: "ScriptedModel 没有更多响应"' in added and "timestamp: {$type: number}" in added
    suite = load_suite(root)
    [case] = [case for case in suite.cases if case.id == EXHAUST]
    assert run_alone(create(), case).status == "passed"


def test_a_value_that_changes_between_runs_is_refused(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = root / "ch04" / "exhaustion.yaml"
    seed(path, "timestamp: {$type: number}", "timestamp: {$type: string}")  # the reference stamps the clock here
    before = path.read_text(encoding="utf-8")
    code, diff, err = regen(capsys, root, EXHAUST, "--write")
    assert code == 1 and diff == "" and path.read_text(encoding="utf-8") == before
    assert "steps[1].value.timestamp changes from run to run; write a matcher there by hand" in err


def test_aliases_stay_when_their_anchor_changes_the_same_way(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = root / "ch04" / "aborts.yaml"
    seed(path, 'errorMessage: "Request was aborted"', 'errorMessage: "Request aborted"')
    seed(path, 'delta: "第二轮"', 'delta: "第三轮"')
    code, diff, err = regen(capsys, root, ABORT)
    assert code == 0, err
    changed = [line for line in diff.splitlines()[2:] if line[:1] in "+-"]
    assert len(changed) == 4
    assert changed[1].startswith('+              error: &ab1e {role: assistant, stopReason: aborted, errorMessage: "Request was aborted"')
    assert changed[3] == '+              delta: "第二轮"'
    assert "value: *ab1e" in path.read_text(encoding="utf-8")


def test_a_grown_event_list_gets_new_items_appended(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = root / "ch04" / "aborts.yaml"
    text = path.read_text(encoding="utf-8")
    done = "            - type: done\n              reason: stop\n              message: *ab1b\n"
    path.write_text(text.replace(done, "", 1), encoding="utf-8")
    code, diff, err = regen(capsys, root, ABORT, "--write")
    assert code == 0, err
    added = [line[1:] for line in diff.splitlines()[2:] if line.startswith("+")]
    assert added[:2] == ["            - type: done", "              reason: stop"] and not any(
        line.startswith("-") for line in diff.splitlines()[2:]
    )
    assert lint(root) == []


def test_hand_written_expectations_are_refused(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = root / "ch03" / "text-of.yaml"
    seed(path, 'value: "先读取\\n再回答"', 'value: "stale"')
    seed(path, f"  - id: {TEXT_OF}\n", f"  - id: {TEXT_OF}\n    expectations: hand-written\n")
    before = path.read_text(encoding="utf-8")
    assert [problem for problem in lint(root) if problem.case_id == TEXT_OF] == []  # the marker is valid
    code, diff, err = regen(capsys, root, TEXT_OF, "--write")
    assert code == 1 and diff == ""
    assert f"refused: fixtures/ch03/text-of.yaml:5: {TEXT_OF}: its expectations are marked `expectations: hand-written`" in err
    assert path.read_text(encoding="utf-8") == before


def test_regen_refuses_to_run_when_the_reference_fails_another_case(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(root / "ch03" / "constructors.yaml", 'text: ""', 'text: "not empty"')
    seed(root / "ch03" / "text-of.yaml", 'value: "先读取\\n再回答"', 'value: "stale"')
    before = (root / "ch03" / "text-of.yaml").read_text(encoding="utf-8")
    code, diff, err = regen(capsys, root, TEXT_OF, "--write")
    assert code == 1 and diff == ""
    assert "refused: the reference fails 1 other case(s)" in err and "make-text-empty: failed: value.text" in err
    assert (root / "ch03" / "text-of.yaml").read_text(encoding="utf-8") == before


def test_unknown_and_broken_are_refused(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = regen(capsys, root, "no-such-case")
    assert code == 1 and "no case with id no-such-case" in err
    seed(root / "ch03" / "text-of.yaml", "clauses: [IR-TEXT-1, IR-TEXT-4]", "clauses: [IR-TEXT-99]")
    code, _, err = regen(capsys, root, TEXT_OF)
    assert code == 1 and "do not load cleanly" in err and "IR-TEXT-99" in err


def rewrite(text: str, path: list[str | int], new: object) -> str:
    """Replace the value at ``path`` with ``new`` through the text editor regen uses."""
    document = yamltext.parse(text)
    node, old = document.root, yaml.safe_load(text)
    for part in path:
        assert node is not None
        node = node.get(part) if isinstance(part, str) else node.item(part)
        old = old[part]
    assert node is not None
    rewriter = textedit.Rewriter(text)
    edits = rewriter.value_edits(node, old, new)  # type: ignore[arg-type]
    return textedit.apply(text, document, edits, rewriter.kept_aliases)


def test_values_inside_flow_steps_are_rewritten_in_flow_style() -> None:
    text = "steps:\n  - {action: consume, call: c1, expect: {finished: true, events: [{type: start}]}}  # why\n"
    new = {"finished": True, "events": [{"type": "start"}, {"type": "done", "reason": "stop"}]}
    edited = rewrite(text, ["steps", 0, "expect"], new)
    assert (
        edited
        == "steps:\n  - {action: consume, call: c1, expect: {finished: true, events: [{type: start}, {type: done, reason: stop}]}}  # why\n"
    )


def test_an_alias_after_its_key_becomes_a_block_below_it() -> None:
    text = 'turn: &t {role: assistant, text: "好"}\nexpect:\n  value: *t\n  other: 1\n'
    new = {"role": "assistant", "text": "不好", "content": [{"type": "text"}]}
    edited = rewrite(text, ["expect", "value"], new)
    assert yaml.safe_load(edited) == {"turn": {"role": "assistant", "text": "好"}, "expect": {"value": new, "other": 1}}
    assert 'expect:\n  value:\n    role: assistant\n    text: "不好"\n    content:\n      - {type: text}\n  other: 1\n' in edited


def test_an_anchor_still_used_elsewhere_is_not_edited_behind_its_aliases_back() -> None:
    text = "input: {turn: x}\nexpect:\n  first: &e {a: 1}\n  second: *e\n"
    with pytest.raises(textedit.EditError, match=r"anchored as &e .* line 4 uses it"):
        rewrite(text, ["expect"], {"first": {"a": 2}, "second": {"a": 1}})
    # Changed the same way in both places, the alias stays.
    assert (
        rewrite(text, ["expect"], {"first": {"a": 2}, "second": {"a": 2}})
        == "input: {turn: x}\nexpect:\n  first: &e {a: 2}\n  second: *e\n"
    )


# -- review aids: the clause next to each change; a value the spec quotes is not regen's to change --


def test_each_changed_value_is_shown_with_the_clause_that_decides_it(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(root / "ch03" / "text-of.yaml", 'value: "先读取\\n再回答"', 'value: "stale"')
    code, _, err = regen(capsys, root, TEXT_OF)
    assert code == 0, err
    assert f'{TEXT_OF}: expect.value: "stale" -> "先读取\\n再回答"\n    IR-TEXT-1: ' in err, err


def test_a_new_value_contradicting_a_string_the_spec_quotes_is_refused_even_when_named(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reference with upstream's English exhaustion text: SM-EXHAUST-1 quotes the Chinese one exactly.
    import reference_impl.scripted_model as scripted_model

    monkeypatch.setattr(scripted_model, "EXHAUSTED_MESSAGE", "ScriptedModel has no more responses")
    path = root / "ch04" / "exhaustion.yaml"
    before = path.read_text(encoding="utf-8")
    code, diff, err = regen(capsys, root, EXHAUST, "--write")
    assert code == 1 and diff == "", err
    assert 'contradicts SM-EXHAUST-1, which quotes "ScriptedModel 没有更多响应" exactly' in err, err
    assert path.read_text(encoding="utf-8") == before


def test_the_check_of_the_other_cases_runs_on_the_engine_and_every_reference_is_closed(root: Path) -> None:
    import reference_impl
    from conformance.adapters.binding import BindingAdapter
    from conformance.adapters.interface import GaveUp
    from conformance.authoring.regen import regenerate

    started: list[BindingAdapter] = []
    closed: list[BindingAdapter] = []

    class Reference(BindingAdapter):
        """The first adapter gives every operation up, as a process adapter does after timeouts."""

        def prepare(self, operation: str, lab: str) -> None:
            if self is started[0]:
                raise GaveUp(f"not run: {operation} timed out 3 times in a row")

        def close(self) -> None:
            closed.append(self)

    def fresh() -> BindingAdapter:
        started.append(Reference(reference_impl, name="reference"))
        return started[-1]

    seed(root / "ch03" / "text-of.yaml", 'value: "先读取\\n再回答"', 'value: "stale"')
    # Each given-up case passes when retried alone, as run would retry it: regen is not refused.
    result = regenerate([TEXT_OF], root, fresh)
    assert result.refused == [] and '+      value: "先读取\\n再回答"' in result.diff
    assert len(started) > 2 and sorted(map(id, closed)) == sorted(map(id, started))
