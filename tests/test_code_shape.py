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


#: Where no module imports another's private name: the packages, the examples, the benchmarks and the tests.
IMPORTING = (*PACKAGES, "examples", "bench", "tests")


def _private_imports(tree: ast.AST) -> list[str]:
    """``module.name`` of each ``from module import _name`` in ``tree`` (dunders are public)."""
    return [
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def test_no_module_imports_a_private_name_of_another() -> None:
    # A name another module needs is part of its owner's interface: make it public there.
    found = [
        f"{path.relative_to(ROOT)}: {name}"
        for folder in IMPORTING
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name in _private_imports(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "import only public names (make the name public where it lives):\n" + "\n".join(found)


def test_the_private_import_check_finds_one() -> None:
    found = _private_imports(ast.parse("from conformance.adapters.binding import BindingAdapter, _Call"))
    assert found == ["conformance.adapters.binding._Call"]
    assert _private_imports(ast.parse("from __future__ import annotations\nfrom a import __version__")) == []


#: The floors of ``conformance/``, bottom first: a package imports only from lower floors (or its own).
#: A new package must be given a floor here, so the picture in docs/architecture.md stays whole.
FLOORS: tuple[frozenset[str], ...] = (
    frozenset({"common", "__version__"}),
    frozenset({"model", "yamlio"}),
    frozenset({"loading", "judging", "toolchain"}),
    frozenset({"isolation"}),
    frozenset({"adapters"}),
    frozenset({"running"}),
    frozenset({"grading", "authoring", "mutation"}),
    # The text a student reads: it words what judging decides and what grading scored.
    frozenset({"feedback"}),
    frozenset({"autograder"}),
    frozenset({"reports"}),
    frozenset({"gradescope"}),
    frozenset({"farm", "fuzz"}),
    frozenset({"commands", "server"}),
    # The entry points: cli.py imports each command's module by name (importlib), the pytest entry
    # (suite/) runs commands' plugin, and the CLI reference is written from cli.py's parser.
    frozenset({"cli", "suite"}),
    frozenset({"cli_reference"}),
)


def _package_of(path: Path) -> str:
    parts = path.relative_to(ROOT / "conformance").parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def _imported_packages(path: Path) -> set[str]:
    """The ``conformance`` packages ``path`` imports from, lazily imported ones included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] if node.module == "conformance" else [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found |= {name.split(".")[1] for name in names if name.startswith("conformance.")}
    return found


def _floor(package: str) -> int:
    return next(index for index, floor in enumerate(FLOORS) if package in floor)


def test_every_package_has_a_floor() -> None:
    packages = {_package_of(path) for path in (ROOT / "conformance").rglob("*.py")} - {"__init__"}
    placed = set().union(*FLOORS)
    assert packages - placed == set(), "give each new package a floor in FLOORS"


def test_imports_only_go_down() -> None:
    upward = []
    for path in (ROOT / "conformance").rglob("*.py"):
        package = _package_of(path)
        if package == "__init__":
            continue
        for imported in _imported_packages(path) - {package}:
            if _floor(imported) >= _floor(package):
                upward.append(f"{path.relative_to(ROOT)} imports conformance.{imported}")
    assert upward == []


def test_the_floor_check_finds_an_import_back_up(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from conformance.grading.rubric import Rubric\n", encoding="utf-8")
    assert _imported_packages(module) == {"grading"}
    assert _floor("grading") > _floor("adapters")
