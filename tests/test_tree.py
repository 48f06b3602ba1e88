"""The test tree keeps its own rules: markers registered and honoured, helpers in support/, no test module imports another."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import requirements
from tests.support.paths import REPO

TESTS = REPO / "tests"


def test_every_requirement_marker_is_registered(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":", 1)[0].strip() for line in pytestconfig.getini("markers")}
    assert {*requirements.CHECKS, *requirements.COSTS} <= registered


def test_the_fast_tier_leaves_out_every_requirement_and_the_wheel_builds() -> None:
    left_out = requirements.FAST_TIER.removeprefix("not (").removesuffix(")").split(" or ")
    assert set(left_out) == {*requirements.CHECKS, *requirements.COSTS}
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert f'-m "{requirements.FAST_TIER}"' in makefile, "make test-fast selects FAST_TIER"


@pytest.fixture
def no_node(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This machine, as the requirements see it, without Node.js (the checks are cached: cleared around the test)."""
    monkeypatch.setitem(requirements.CHECKS, "needs_node", lambda: "no node in this test")
    requirements.missing.cache_clear()
    yield
    requirements.missing.cache_clear()


def test_a_marked_test_is_skipped_with_the_reason_when_the_tool_is_missing(request: pytest.FixtureRequest, no_node: None) -> None:
    requirements.skip_missing([request.node])  # not marked yet: no skip
    assert request.node.get_closest_marker("skip") is None
    request.node.add_marker(requirements.needs_node)
    requirements.skip_missing([request.node])
    skip = request.node.get_closest_marker("skip")
    assert skip is not None and skip.kwargs == {"reason": "no node in this test"}
    with pytest.raises(pytest.skip.Exception, match="no node in this test"):
        requirements.require("needs_node")


def _test_modules() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*.py") if "support" not in path.relative_to(TESTS).parts)


#: The tests of the whole tree's shape (the test tree's rules, the code's size limits) belong to no stage.
_TREE_WIDE = frozenset({"test_tree.py", "test_code_shape.py"})


def test_test_modules_live_in_stage_folders_and_helpers_in_support() -> None:
    misplaced = []
    for path in _test_modules():
        relative = path.relative_to(TESTS)
        if path.name in ("__init__.py", "conftest.py"):
            continue
        if not path.name.startswith("test_") or (len(relative.parts) == 1 and path.name not in _TREE_WIDE):
            misplaced.append(str(relative))
    assert misplaced == [], "helpers go in tests/support/, test modules in a stage folder (tests/README.md)"


def test_no_test_module_imports_another() -> None:
    found = []
    for path in _test_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [module or ""]
            found += [f"{path.relative_to(TESTS)}: {name}" for name in names if name.startswith("tests.") and ".test_" in name]
    assert found == [], "shared helpers go in tests/support/"
