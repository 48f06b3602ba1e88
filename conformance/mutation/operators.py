"""A small AST mutator for ``reference_impl``: each mutant is one local change to one module.

Why our own and not mutmut: mutmut rewrites files on disk and runs a test command per
mutant, which means one Python start and one fixture load per mutant. Here a mutant is an
AST, compiled and executed into a fresh module namespace, so the whole suite runs in one
process with the fixtures loaded once (see :mod:`conformance.mutation.runner`).

Ids are stable across runs and across unrelated edits elsewhere in the file:
``<file>:<line>:<operator>:<occurrence>``, the occurrence counting only the mutants of the
same operator on the same line, in source order.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: Every operator, with what it does; the report counts kills per operator.
OPERATORS: Final = {
    "compare-flip": "a comparison replaced by its negation (== / !=, < / >=, is / is not, in / not in)",
    "bool-negate": "an if / while / ternary condition negated, or and / or swapped",
    "const-change": "an int constant n becomes n + 1, a bool flips, None becomes a value",
    "string-change": "a string literal changed (empty becomes 'x', others get a suffix)",
    "remove-stmt": "a statement replaced by pass",
    "deepcopy-identity": "copy.deepcopy(x) or list(x) replaced by x itself",
    "return-none": "return <value> replaced by return None",
    "index-shift": "an index or slice bound off by one",
    "binop-swap": "+ and - swapped (also in +=)",
}

_COMPARE_FLIPS: Final[dict[type[ast.cmpop], type[ast.cmpop]]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}

# A step from the module root to a node: (field name, index in a list field or None).
Step = tuple[str, int | None]


@dataclass(frozen=True)
class Mutant:
    """One mutation of one module of the reference."""

    id: str
    file: str  # relative to the repository, e.g. reference_impl/ir.py
    module: str  # the module's name inside the package, e.g. ir
    line: int
    operator: str
    diff: str  # "<original> -> <mutated>", both unparsed from the AST
    path: tuple[Step, ...]
    replacement: ast.AST

    def apply(self, tree: ast.Module) -> ast.Module:
        """A copy of ``tree`` (the module's original AST) with this mutation applied; ``tree`` is left as it was.

        Only the nodes on the path to the mutation are copied (and the lists holding them);
        the rest is shared with ``tree``, which compiling never changes. A deep copy of the
        whole module per mutant was most of the cost of building one.
        """
        mutated = copy.copy(tree)
        parent: ast.AST = mutated
        last = len(self.path) - 1
        for position, (name, index) in enumerate(self.path):
            child = getattr(parent, name)
            old = child if index is None else child[index]
            new = copy.deepcopy(self.replacement) if position == last else copy.copy(old)
            if index is None:
                setattr(parent, name, new)
            else:
                items = list(child)
                items[index] = new
                setattr(parent, name, items)
            parent = new
        return ast.fix_missing_locations(mutated)


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)


def _is_typing_only(statement: ast.stmt) -> bool:
    """Statements with no runtime behaviour worth mutating: imports, type declarations, __all__."""
    if isinstance(statement, ast.Import | ast.ImportFrom | ast.AnnAssign) and not (
        isinstance(statement, ast.AnnAssign) and statement.value is not None and not _is_type_alias(statement)
    ):
        return True
    if isinstance(statement, ast.Assign) and any(
        isinstance(t, ast.Name) and (t.id == "__all__" or t.id[:1].isupper()) for t in statement.targets
    ):
        # __all__ and type aliases (AssistantContent = TextContent | ToolCall, T = TypeVar(...)).
        return _is_type_alias_value(statement.value) or any(isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets)
    if isinstance(statement, ast.ClassDef):
        # TypedDicts and enums only declare shapes; annotations are never evaluated
        # (from __future__ import annotations), so mutating them cannot be observed.
        bases = {ast.unparse(base) for base in statement.bases}
        return bool(bases & {"TypedDict", "enum.Enum"})
    return isinstance(statement, ast.Assert)  # asserts narrow types for mypy; removing one is equivalent by design


def _is_type_alias(statement: ast.AnnAssign) -> bool:
    return statement.value is not None and _is_type_alias_value(statement.value)


def _is_type_alias_value(value: ast.expr) -> bool:
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
        return True
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "TypeVar":
        return True
    return isinstance(value, ast.Subscript) and ast.unparse(value.value) in {"Literal", "frozenset", "Final"}


class _Collector:
    """Walks a module's AST and records every (path, operator, replacement) it can mutate."""

    def __init__(self) -> None:
        self.found: list[tuple[tuple[Step, ...], int, str, ast.AST, ast.AST]] = []

    def add(self, path: tuple[Step, ...], node: ast.AST, operator: str, replacement: ast.AST) -> None:
        self.found.append((path, getattr(node, "lineno", 0), operator, node, replacement))

    def visit(self, node: ast.AST, path: tuple[Step, ...]) -> None:
        self.mutate(node, path)
        for name, value in ast.iter_fields(node):
            if name in {"annotation", "returns", "type_comment", "decorator_list", "bases"}:
                continue  # annotations are strings at run time here; decorators are typing aids
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if isinstance(item, ast.stmt) and (_is_docstring(item) or _is_typing_only(item)):
                        continue
                    if isinstance(item, ast.AST):
                        self.visit(item, (*path, (name, index)))
            elif isinstance(value, ast.AST):
                if isinstance(node, ast.Subscript) and name == "slice" and _is_key_lookup(value):
                    continue  # message["role"]: changing the key is covered elsewhere and only raises KeyError
                self.visit(value, (*path, (name, None)))

    def mutate(self, node: ast.AST, path: tuple[Step, ...]) -> None:
        """Record the mutants of ``node`` itself (its children are visited on their own)."""
        # Each helper handles node types none of the others does: at most one of them adds mutants.
        self._flip_logic(node, path)
        self._change_value(node, path)
        self._swap_arithmetic(node, path)
        if isinstance(node, ast.stmt) and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Pass) and path:
            self.add(path, node, "remove-stmt", ast.Pass())

    def _flip_logic(self, node: ast.AST, path: tuple[Step, ...]) -> None:
        """A comparison flipped, ``and`` and ``or`` swapped, a condition negated."""
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                flipped = copy.deepcopy(node)
                flipped.ops[index] = _COMPARE_FLIPS[type(op)]()
                self.add(path, node, "compare-flip", flipped)
        elif isinstance(node, ast.BoolOp):
            swapped = ast.BoolOp(op=ast.Or() if isinstance(node.op, ast.And) else ast.And(), values=copy.deepcopy(node.values))
            self.add(path, node, "bool-negate", swapped)
        elif isinstance(node, ast.If | ast.While | ast.IfExp):
            negated = copy.deepcopy(node)
            negated.test = ast.UnaryOp(op=ast.Not(), operand=copy.deepcopy(node.test))
            self.add(path, node, "bool-negate", negated)

    def _change_value(self, node: ast.AST, path: tuple[Step, ...]) -> None:
        """A constant changed, a copy dropped, a returned value made None, an index shifted."""
        if isinstance(node, ast.Constant):
            self._constant(node, path)
        elif isinstance(node, ast.Call):
            self._call(node, path)
        elif isinstance(node, ast.Return) and node.value is not None and not _is_none(node.value):
            self.add(path, node, "return-none", ast.Return(value=ast.Constant(value=None)))
        elif isinstance(node, ast.Subscript) and not _is_key_lookup(node.slice):
            self._subscript(node, path)

    def _swap_arithmetic(self, node: ast.AST, path: tuple[Step, ...]) -> None:
        """``+`` and ``-`` swapped (string concatenation aside), in an expression or an augmented assignment."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub) and not _is_string_concat(node):
            swapped_op = ast.BinOp(
                left=copy.deepcopy(node.left), op=ast.Sub() if isinstance(node.op, ast.Add) else ast.Add(), right=copy.deepcopy(node.right)
            )
            self.add(path, node, "binop-swap", swapped_op)
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add | ast.Sub):
            swapped_aug = copy.deepcopy(node)
            swapped_aug.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            self.add(path, node, "binop-swap", swapped_aug)

    def _constant(self, node: ast.Constant, path: tuple[Step, ...]) -> None:
        value = node.value
        if isinstance(value, bool):
            self.add(path, node, "const-change", ast.Constant(value=not value))
        elif isinstance(value, int):
            self.add(path, node, "const-change", ast.Constant(value=value + 1))
        elif isinstance(value, float):
            self.add(path, node, "const-change", ast.Constant(value=value + 1.0))
        elif value is None:
            self.add(path, node, "const-change", ast.Constant(value=""))
        elif isinstance(value, str):
            self.add(path, node, "string-change", ast.Constant(value=value + "~" if value else "x"))

    def _call(self, node: ast.Call, path: tuple[Step, ...]) -> None:
        name = ast.unparse(node.func)
        if name in {"copy.deepcopy", "list", "copy.copy", "dict"} and len(node.args) == 1 and not node.keywords:
            self.add(path, node, "deepcopy-identity", copy.deepcopy(node.args[0]))

    def _subscript(self, node: ast.Subscript, path: tuple[Step, ...]) -> None:
        if isinstance(node.slice, ast.Slice):
            for bound in ("lower", "upper"):
                value = getattr(node.slice, bound)
                if value is None:
                    continue
                shifted = copy.deepcopy(node)
                assert isinstance(shifted.slice, ast.Slice)
                setattr(shifted.slice, bound, ast.BinOp(left=copy.deepcopy(value), op=ast.Add(), right=ast.Constant(value=1)))
                self.add(path, node, "index-shift", shifted)
        elif not isinstance(node.slice, ast.Constant) or isinstance(node.slice.value, int):
            shifted = copy.deepcopy(node)
            shifted.slice = ast.BinOp(left=copy.deepcopy(node.slice), op=ast.Add(), right=ast.Constant(value=1))
            self.add(path, node, "index-shift", shifted)


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_key_lookup(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_string_concat(node: ast.BinOp) -> bool:
    return any(
        (isinstance(side, ast.Constant) and isinstance(side.value, str)) or isinstance(side, ast.JoinedStr)
        for side in (node.left, node.right)
    )


def _render(node: ast.AST) -> str:
    text = ast.unparse(node).strip()
    first = text.splitlines()[0] if text else "pass"
    return first if len(first) <= 160 else first[:159] + "…"


def module_mutants(path: Path, relative: str) -> Iterator[Mutant]:
    """Every mutant of one module, in source order, with stable ids."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    collector = _Collector()
    for index, statement in enumerate(tree.body):
        if _is_docstring(statement) or _is_typing_only(statement):
            continue
        collector.visit(statement, (("body", index),))
    occurrences: dict[tuple[int, str], int] = {}
    module = path.stem
    found = sorted(collector.found, key=lambda item: (item[1], getattr(item[3], "col_offset", 0)))
    for step_path, line, operator, node, replacement in found:
        occurrence = occurrences.get((line, operator), 0)
        occurrences[(line, operator)] = occurrence + 1
        diff = f"{_render(node)}  ->  {_render(replacement)}"
        yield Mutant(f"{relative}:{line}:{operator}:{occurrence}", relative, module, line, operator, diff, step_path, replacement)


def all_mutants(package_dir: Path, prefix: str = "reference_impl") -> list[Mutant]:
    """Every mutant of every module of the package (``__init__`` included), in file order."""
    mutants: list[Mutant] = []
    for path in sorted(package_dir.glob("*.py")):
        mutants.extend(module_mutants(path, f"{prefix}/{path.name}"))
    return mutants
