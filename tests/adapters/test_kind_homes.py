"""The kinds of ``--impl`` are known by their registry only, and the renderers do not know the runner.

Source checks: a module outside ``conformance/adapters/kinds`` that tests or builds an
``--impl`` value by its prefix (``startswith("pi-ai:")``, ``f"pi-ai:{path}"``, ``== "reference"``)
re-parses what the registry parsed once; a renderer under ``conformance/html`` that imports
the pytest plugin depends on the runner's state instead of data of its own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conformance.adapters.kinds import KINDS, parse_impl, submission_kind
from conformance.spec.profiles import DEFAULT_PROFILE, PI_AI_1

PACKAGE = Path(__file__).resolve().parents[2] / "conformance"
REGISTRY = PACKAGE / "adapters" / "kinds"
PREFIXES = tuple(f"{kind.name}:" for kind in KINDS if kind.takes_target)
BARE_NAMES = frozenset(kind.name for kind in KINDS if not kind.takes_target)


def _prefix_uses(tree: ast.AST) -> list[int]:
    """Lines that test or build an ``--impl`` value by its kind's prefix."""
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("startswith", "partition", "split"):
            texts = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
            if any(text.startswith(PREFIXES) for text in texts):
                lines.append(node.lineno)
        elif isinstance(node, ast.JoinedStr) and len(node.values) > 1:
            head = node.values[0]
            # f"pi-ai:{folder}": an --impl put together by hand (a sentence that names a kind has words after the colon)
            if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value in PREFIXES:
                lines.append(node.lineno)
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(side, ast.Constant) and side.value in BARE_NAMES for side in sides):
                lines.append(node.lineno)
    return lines


def _modules(folder: Path) -> list[Path]:
    modules = sorted(path for path in folder.rglob("*.py") if REGISTRY not in path.parents)
    assert modules, f"no module under {folder}: a check of nothing would pass"
    return modules


def test_no_module_outside_the_registry_reads_or_writes_a_kind_prefix() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in _modules(PACKAGE)
        for line in _prefix_uses(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []


def test_the_source_check_finds_what_it_looks_for() -> None:
    # Each of these is what the check exists to refuse.
    for text in ('impl.startswith("pi-ai:")', 'f"pi-ai:{prefix}?package={name}"', 'impl == "reference"'):
        assert _prefix_uses(ast.parse(text)), text
    assert _prefix_uses(ast.parse('"pi-course: run the project\'s build first"')) == []


#: A kind's prefix written in a string, as help texts and group titles did (``"process implementations (cmd:, pi-course:)"``).
SPELLED = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(prefix) for prefix in PREFIXES) + ")")
#: Modules that still spell their own kind in their messages (the transports the kinds start; the spec model, which
#: the registry imports and so cannot import back): what is left to move into the kinds.
STILL_SPELLED = frozenset(
    {"adapters/pi_agent_core.py", "adapters/pi_ai.py", "adapters/pi_course.py", "adapters/process.py", "spec/profiles.py"}
)


def _spelled(tree: ast.AST) -> list[int]:
    """Lines of string constants (docstrings aside) that spell a kind's prefix."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings and SPELLED.search(node.value)
    ]


def test_help_texts_and_messages_outside_the_registry_do_not_spell_a_prefix() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in _modules(PACKAGE)
        if path.relative_to(PACKAGE).as_posix() not in STILL_SPELLED
        for line in _spelled(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "build the text from conformance.adapters.kinds (PROCESS_GROUP, BUILT_KINDS, prefixes(), a kind's usage)"


def test_the_spelling_check_finds_a_group_title() -> None:
    assert _spelled(ast.parse('group("process implementations (cmd:, pi-course:)")')) == [1]
    assert _spelled(ast.parse('help = "allow python: submissions"')) == [1]
    assert _spelled(ast.parse('"""Docstrings may name pi-course: projects."""\nx = "a python-course: word"')) == []


def test_the_fork_server_preloads_what_each_kind_names() -> None:
    from conformance.adapters.kinds import PRELOAD_MODULES
    from conformance.farm.forkserver import PRELOAD

    assert all(module in PRELOAD for kind in KINDS for module in kind.preload)
    assert "conformance.adapters.pi_ai" in PRELOAD_MODULES and "conformance.adapters.pi_course" in PRELOAD_MODULES


def test_the_renderers_do_not_import_the_runner() -> None:
    for path in _modules(PACKAGE / "reports" / "html"):
        imported = {
            node.module
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and node.module
        }
        assert "conformance.commands.pytest_plugin" not in imported, path


@pytest.mark.parametrize(
    ("impl", "profile", "expected"),
    [
        ("reference", DEFAULT_PROFILE, True),
        ("reference", PI_AI_1.name, False),
        ("pi-course:.", DEFAULT_PROFILE, False),
        ("cmd:./port", PI_AI_1.name, False),
        ("nonsense", DEFAULT_PROFILE, False),
    ],
)
def test_the_reference_of_a_profile_is_its_kinds_answer(impl: str, profile: str, expected: bool) -> None:
    assert parse_impl(impl).is_reference(profile) is expected


def test_run_as_asks_the_kind_what_its_processes_read() -> None:
    course = parse_impl("pi-course:{path}")
    assert course.process_needs(build=False) and len(course.process_needs(build=True)) == len(course.process_needs(build=False)) + 1
    assert parse_impl("cmd:./port").process_needs(build=True) == []
    assert parse_impl("reference").process_needs(build=False) == []
    assert submission_kind(PI_AI_1.name).usage == "pi-ai:PATH"


def test_the_kind_asks_for_its_own_profile_when_none_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.adapters import pi_ai
    from conformance.adapters.process import ProcessAdapter
    from conformance.adapters.process_options import ProcessOptions
    from conformance.adapters.settings import ImplSettings

    def unstarted(target: str, settings: ImplSettings) -> ProcessAdapter:
        return ProcessAdapter(ProcessOptions.from_settings(["true"], settings))  # started only by its first case

    monkeypatch.setattr(pi_ai, "pi_ai_adapter", unstarted)
    for profile, requested in ((None, PI_AI_1.name), (PI_AI_1.name, PI_AI_1.name), (DEFAULT_PROFILE, None)):
        adapter = parse_impl("pi-ai:/nowhere").adapter(profile=profile)
        assert isinstance(adapter, ProcessAdapter) and adapter.requested_profile == requested, profile
        adapter.close()
    command = parse_impl("cmd:true").adapter()
    assert isinstance(command, ProcessAdapter) and command.requested_profile is None
    command.close()
