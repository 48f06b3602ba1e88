"""The engine is the only way to run cases: ``run_case`` is called inside ``running/`` only.

A caller outside ``running/`` that called ``run_case`` itself would run its cases outside the
policy that every command shares (the timeout rule, the retry of a case given up on); the
reference's re-checks of one case (fuzz, emit, the private set, regen) use ``run_alone``.
"""

from __future__ import annotations

import ast

from conformance.adapters.interface import Adapter, NotTried
from conformance.adapters.reference import create as reference_adapter
from conformance.common.jsontypes import JsonObject
from conformance.running.engine import run_alone
from tests.support.paths import REPO
from tests.support.scratch_cases import TEXT_CASE

#: Where ``run_case`` may be named: the stage that owns it, and its own tests.
OWNERS = (REPO / "conformance" / "running", REPO / "tests" / "running")
SEARCHED = ("conformance", "reference_impl", "examples", "bench", "tests")


def _run_case_uses(tree: ast.AST) -> list[int]:
    """Lines that import or call ``run_case``."""
    lines = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and any(a.name == "run_case" for a in node.names)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name == "run_case":
                lines.append(node.lineno)
    return lines


def test_run_case_is_used_inside_running_only() -> None:
    modules = [path for folder in SEARCHED for path in sorted((REPO / folder).rglob("*.py"))]
    assert modules
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in modules
        if not any(owner in path.parents for owner in OWNERS)
        for line in _run_case_uses(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "run cases through conformance.running.engine (Loop, run_one, run_alone)"


def test_the_check_finds_a_direct_call() -> None:
    assert _run_case_uses(ast.parse("from conformance.running.execution import run_case\nrun_case(a, c)")) == [1, 2]
    assert _run_case_uses(ast.parse("execution.run_case(a, c)")) == [1]
    assert _run_case_uses(ast.parse("run_alone(a, c)")) == []


class _GivesUp(Adapter):
    """Does not try ``text_of``: its transport gave up on it after timeouts in a row."""

    def text_of(self, input: JsonObject) -> JsonObject:
        raise NotTried("text_of was given up on")


def test_run_alone_applies_the_engines_policy() -> None:
    assert run_alone(reference_adapter(), TEXT_CASE).status == "passed"
    alone = run_alone(_GivesUp(), TEXT_CASE)
    assert alone.status == "errored" and alone.given_up, "nothing to retry in: the outcome stands"
    # With a fresh adapter, the case given up on is run again in it, as in every loop.
    assert run_alone(_GivesUp(), TEXT_CASE, fresh=reference_adapter).status == "passed"
