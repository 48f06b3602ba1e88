"""The mutation score of the suite: a fast fixed-seed sample on every run, and the mutator's own rules.

The full run is ``make mutation`` (under a minute on two cores); this sample keeps CI honest
between full runs: any sampled survivor must be declared in ``spec/equivalent-mutants.yaml``.
"""

from __future__ import annotations

import ast
import json
import warnings
from collections.abc import Sequence
from pathlib import Path

import pytest

from conformance.adapters.interface import Adapter
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.mutation.operators import OPERATORS, Step, all_mutants
from conformance.mutation.runner import PACKAGE_DIR, MutationRun, run_mutants, sample
from conformance.mutation.score_report import EQUIVALENTS_FILE, build_report, load_declared
from conformance.running import engine
from tests.support.requirements import costly

SAMPLE_SIZE = 30
SAMPLE_SEED = 10


@pytest.fixture(scope="module")
def mutants() -> list:  # type: ignore[type-arg]
    return all_mutants(PACKAGE_DIR)


def test_ids_are_unique_and_stable(mutants: list) -> None:  # type: ignore[type-arg]
    ids = [mutant.id for mutant in mutants]
    assert len(ids) == len(set(ids))
    assert ids == [mutant.id for mutant in all_mutants(PACKAGE_DIR)]
    for mutant in mutants:
        file, line, operator, occurrence = mutant.id.rsplit(":", 3)
        assert (file, int(line), operator) == (mutant.file, mutant.line, mutant.operator) and occurrence.isdigit()
        assert operator in OPERATORS


def test_every_operator_is_used(mutants: list) -> None:  # type: ignore[type-arg]
    assert {mutant.operator for mutant in mutants} == set(OPERATORS)


def _at(tree: ast.AST, path: tuple[Step, ...]) -> ast.AST:
    node = tree
    for name, index in path:
        node = getattr(node, name) if index is None else getattr(node, name)[index]
    return node


@costly
def test_every_mutant_compiles_and_leaves_the_original_tree_as_it_was(mutants: list) -> None:  # type: ignore[type-arg]
    trees = {path.stem: ast.parse(path.read_text(encoding="utf-8")) for path in PACKAGE_DIR.glob("*.py")}
    originals = {name: ast.dump(tree, include_attributes=True) for name, tree in trees.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # `x is not ''` and the like: the mutant's doing
        for mutant in mutants:
            mutated = mutant.apply(trees[mutant.module])
            compile(mutated, mutant.file, "exec")
            # The copy holds the replacement where the path leads (apply shares the rest with the original).
            assert ast.dump(_at(mutated, mutant.path)) == ast.dump(mutant.replacement), mutant.id
    assert {name: ast.dump(tree, include_attributes=True) for name, tree in trees.items()} == originals


def test_the_original_passes_and_a_plain_bug_is_killed(mutants: list) -> None:  # type: ignore[type-arg]
    run = MutationRun()
    assert not run.judge(None).killed
    flip = next(m for m in mutants if m.file.endswith("projection.py") and m.operator == "string-change" and "'\\n'" in m.diff)
    verdict = run.judge(flip)
    assert verdict.killed and verdict.by.startswith("text-of-")


def test_a_mutant_runs_on_the_engines_loop_and_stops_at_its_first_failure(
    mutants: list,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[int] = []
    original_run = engine.Loop.run

    def counting(loop: engine.Loop, adapter: Adapter, cases: Sequence[Case]) -> list[Outcome]:
        outcomes = original_run(loop, adapter, cases)
        ran.append(sum(not outcome.message.startswith(engine.NOT_RUN) for outcome in outcomes))
        return outcomes

    monkeypatch.setattr(engine.Loop, "run", counting)
    run = MutationRun()
    flip = next(m for m in mutants if m.file.endswith("projection.py") and m.operator == "string-change" and "'\\n'" in m.diff)
    assert not run.judge(None).killed and ran == [len(run.cases)]
    verdict = run.judge(flip)
    # The loop stopped after the killing case: the cases after it were not run.
    assert verdict.killed and ran[1] < len(run.cases)
    # The killer is tried first on the next mutant: it alone runs.
    assert run.judge(flip).by == verdict.by and ran[2] == 1


def test_the_real_package_is_untouched_by_a_mutant_run(mutants: list) -> None:  # type: ignore[type-arg]
    import reference_impl

    run_mutants(mutants[:3])
    assert reference_impl.text_of({"role": "user", "content": [{"type": "text", "text": "a"}], "timestamp": 1}) == "a"


def test_declared_ids_name_existing_mutants(mutants: list) -> None:  # type: ignore[type-arg]
    declared = load_declared(EQUIVALENTS_FILE)
    known = {mutant.id for mutant in mutants}
    assert set(declared.equivalent) <= known, "an equivalent-mutants.yaml id no longer exists: the code moved, update the entry"
    assert set(declared.gaps) <= known
    assert all(reason.strip() for reason in [*declared.equivalent.values(), *declared.gaps.values()])


@costly
def test_fast_sample_has_no_undeclared_survivor(mutants: list) -> None:  # type: ignore[type-arg]
    chosen = sample(mutants, SAMPLE_SIZE, SAMPLE_SEED)
    verdicts = run_mutants(chosen)
    report = build_report(chosen, verdicts, load_declared(EQUIVALENTS_FILE), complete=False)
    assert report.total == SAMPLE_SIZE
    assert not report.undeclared, f"mutants no case kills and spec/equivalent-mutants.yaml does not declare: {report.undeclared}"


def test_report_shape(tmp_path: Path, mutants: list) -> None:  # type: ignore[type-arg]
    chosen = mutants[:5]
    report = build_report(chosen, run_mutants(chosen), load_declared(tmp_path / "none.yaml"), complete=True)
    data = report.to_json()
    assert {"total", "killed", "survived"} <= set(data)
    assert data["total"] == 5


@costly
def test_module_runs_only_that_modules_mutants_and_names_the_modules_for_a_typo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.mutation.__main__ import main

    report = tmp_path / "report.json"
    assert main(["--module", "json_text", "--jobs", "1", "--report", str(report)]) == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["total"] > 0 and data["total"] == len([m for m in all_mutants(PACKAGE_DIR) if m.module == "json_text"])
    assert all(entry["id"].startswith("reference_impl/json_text.py:") for entry in data["survived"])
    assert main(["--module", "jsontext", "--report", str(report)]) == 2
    assert "no module jsontext in reference_impl; its modules: " in capsys.readouterr().err
