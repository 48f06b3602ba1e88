"""The code stays in pieces a reader can hold: no module over 400 lines, no function over 60.

Complexity is ruff's job (C901, max 10, in pyproject.toml); length is checked here, with no
exception.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("conformance", "reference_impl")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def _long_functions(path: Path) -> list[tuple[str, int]]:
    """``(qualified name, lines)`` of each function in ``path`` longer than the limit, nested ones included."""
    found: list[tuple[str, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef) and child.end_lineno is not None:
                    length = child.end_lineno - child.lineno + 1
                    if length > MAX_FUNCTION_LINES:
                        found.append((name, length))
                name += "."
            walk(child, name)

    walk(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_no_module_is_longer_than_the_limit() -> None:
    lengths = {path.relative_to(ROOT): len(path.read_text(encoding="utf-8").splitlines()) for path in _modules()}
    long = [f"{path}: {lines} lines" for path, lines in lengths.items() if lines > MAX_MODULE_LINES]
    assert not long, f"split these modules by job (at most {MAX_MODULE_LINES} lines):\n" + "\n".join(long)


def test_no_function_is_longer_than_the_limit() -> None:
    found = {f"{path.relative_to(ROOT)}:{name}": lines for path in _modules() for name, lines in _long_functions(path)}
    long = [f"{where}: {lines} lines" for where, lines in sorted(found.items())]
    assert not long, f"split these functions into helpers that say what they do (at most {MAX_FUNCTION_LINES} lines):\n" + "\n".join(long)


def test_the_length_check_finds_a_long_function(tmp_path: Path) -> None:
    body = "".join(f"        x{index} = {index}\n" for index in range(MAX_FUNCTION_LINES))
    module = tmp_path / "long.py"
    module.write_text(f"class Holder:\n    def method(self) -> None:\n{body}\n\ndef short() -> None:\n    pass\n")
    assert _long_functions(module) == [("Holder.method", MAX_FUNCTION_LINES + 1)]
