"""``--impl`` is parsed once, at the boundary: everything below the command line receives an :class:`Impl`.

A source check: the registry's functions that take ``--impl`` *text* (:func:`parse_impl`,
:func:`resolve_adapter`) are called only at the boundaries listed in :data:`TEXT_BOUNDARIES`.
Anywhere else they may only be named as an argparse or pytest option's ``type=`` (the
converter that turns the text into an ``Impl`` when the command line is parsed).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from conformance.adapters.kinds import Impl, bundled_impl, default_impl, parse_impl, submission_impl, submission_spec
from conformance.cli import build_parser
from conformance.model.profiles import DEFAULT_PROFILE, PI_AI_1

PACKAGE = Path(__file__).resolve().parents[2] / "conformance"
#: The functions of the registry that read ``--impl`` text.
TEXT_READERS = frozenset({"parse_impl", "resolve_adapter"})
#: Where text becomes an Impl, and why that is a boundary.
TEXT_BOUNDARIES = {
    # the registry itself (resolve_adapter is parse_impl and start, for callers holding text)
    "adapters/kinds/__init__.py",
    # grade-batch's template becomes each submission's --impl here, once per submission
    "farm/batch.py",
    # grade_submission and planned_isolation are library entry points: tests and benchmarks hand them text
    "grading/grader.py",
    # a worker's result crosses back as JSON: the parent reads the chapter again from the submission's own
    # files (result_json), or for a worker that died (job.failed_result), so no worker's text picks the labs
    "grading/result_json.py",
    "farm/job.py",
}


def _misuses(tree: ast.AST) -> list[int]:
    """Lines that call a text reader, or name one anywhere but as an option's ``type=``."""
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "type" and isinstance(node.value, ast.Name):
            allowed.add(id(node.value))
        elif isinstance(node, ast.Dict):  # an option table's keywords: {"type": parse_impl, ...}
            allowed.update(
                id(value)
                for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant) and key.value == "type"
            )
    named = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id in TEXT_READERS and id(node) not in allowed]
    attributes = [node for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr in TEXT_READERS]
    return sorted(node.lineno for node in (*named, *attributes))


def test_impl_text_is_read_only_at_the_boundaries() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100, "a check of nothing would pass"
    found = [
        f"{path.relative_to(PACKAGE).as_posix()}:{line}"
        for path in modules
        if path.relative_to(PACKAGE).as_posix() not in TEXT_BOUNDARIES
        for line in _misuses(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "take the Impl the command line parsed (an option's type=parse_impl), not its text"


def test_the_source_check_finds_a_second_parse() -> None:
    assert _misuses(ast.parse("impl = parse_impl(args.impl)")) == [1]
    assert _misuses(ast.parse("adapter = kinds.resolve_adapter(spec)")) == [1]
    assert _misuses(ast.parse("factory = parse_impl")) == [1]
    assert _misuses(ast.parse('parser.add_argument("--impl", type=parse_impl)')) == []
    assert _misuses(ast.parse('IMPL = Option("--impl", {"type": parse_impl, "help": "..."})')) == []


def _parsed(words: list[str]) -> argparse.Namespace:
    return build_parser(words).parse_args(words)


@pytest.mark.parametrize(
    ("words", "dest"),
    [
        (["run", "--impl", "cmd:./port"], "impl"),
        (["grade", "--impl", "cmd:./port"], "impl"),
        (["grade-batch", "DIR", "--impl-template", "cmd:./port {path}"], "impl_template"),
        (["matrix", "--impl", "cmd:./port", "--html", "OUT"], "impl"),
        (["fuzz", "--impl", "cmd:./port"], "impl"),
        (["fixtures", "regen", "some-case", "--reference", "cmd:./port"], "reference"),
    ],
)
def test_every_command_receives_an_impl(words: list[str], dest: str) -> None:
    value = getattr(_parsed(words), dest)
    [impl] = value if isinstance(value, list) else [value]
    assert isinstance(impl, Impl) and impl.kind.name == "cmd" and impl.target.startswith("./port")


def test_the_protocol_server_receives_an_impl(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance import server

    class Started(Exception):
        """Raised instead of starting the implementation: the test needs only what the server was handed."""

    def start(self: Impl, *args: object, **kwargs: object) -> None:
        raise Started(self)

    monkeypatch.setattr(Impl, "adapter", start)
    with pytest.raises(Started) as started:
        server.main(["--impl", "python:reference_impl"])
    [impl] = started.value.args
    assert isinstance(impl, Impl) and impl.kind.name == "python" and impl.target == "reference_impl"


def test_defaults_are_impls_of_the_registry() -> None:
    reference = bundled_impl(DEFAULT_PROFILE)
    assert default_impl(DEFAULT_PROFILE) == reference == parse_impl(reference.spec)
    assert default_impl(PI_AI_1.name) is None
    assert str(reference) == reference.spec
    template = submission_impl(PI_AI_1.name, "{path}")
    assert template == parse_impl(submission_spec(PI_AI_1.name, "{path}")) and template.target == "{path}"
