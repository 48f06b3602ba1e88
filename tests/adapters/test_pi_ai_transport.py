"""The pi-ai: transport takes any package implementing upstream's API: a package name option, its dependency tree in the sandbox, bun."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.adapters.kinds import resolve_adapter
from conformance.adapters.pi_ai import PiAiLayoutError, PiAiTarget, dependency_roots, parse_target, pi_ai_adapter
from conformance.adapters.pi_course import modules_dir
from conformance.adapters.settings import ImplSettings
from conformance.isolation.sandbox import SandboxMode
from conformance.loading.loader import Suite, load_suite
from conformance.model.cases import Case
from conformance.running.engine import run_alone
from tests.support.paths import REPO
from tests.support.requirements import needs_bun, needs_bwrap, needs_node

NODE = shutil.which("node")
BUN = shutil.which("bun")

# contentText, through a dependency: enough to pass every content_text case.
PACKAGE_INDEX = """\
import { joinWith } from "dep-join";
export function contentText(content, separator = "\\n") {
  if (typeof content === "string") return content;
  return joinWith(content.filter((block) => block.type === "text").map((block) => block.text), separator);
}
"""


def write_package(folder: Path, name: str, dependencies: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"name": name, "version": "9.9.9", "type": "module", "main": "index.js", "dependencies": dependencies or {}}
    (folder / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def write_fork(folder: Path, name: str) -> Path:
    write_package(folder, name, {"dep-join": "1.0.0"})
    (folder / "index.js").write_text(PACKAGE_INDEX, encoding="utf-8")
    return folder


def write_dependency(node_modules: Path) -> None:
    write_package(node_modules / "dep-join", "dep-join")
    (node_modules / "dep-join" / "index.js").write_text(
        "export const joinWith = (parts, separator) => parts.join(separator);\n", encoding="utf-8"
    )


@pytest.fixture(scope="module")
def content_text_cases() -> list[Case]:
    suite: Suite = load_suite(profile="pi-ai-1")
    return [case for case in suite.cases if case.operation == "content_text"]


def statuses(impl: str, cases: list[Case], sandbox: SandboxMode = "none") -> dict[str, str]:
    adapter = resolve_adapter(impl, ImplSettings(sandbox=sandbox))
    try:
        return {
            case.id: f"{outcome.status}: {outcome.message}" for case in cases if (outcome := run_alone(adapter, case)).status != "passed"
        }
    finally:
        adapter.close()


def test_the_target_options_parse_and_a_question_mark_in_a_path_is_kept() -> None:
    assert parse_target("/x") == PiAiTarget("/x")
    assert parse_target("/x?package=@fork/ai&runtime=bun") == PiAiTarget("/x", "@fork/ai", "bun")
    assert parse_target("/what?ever") == PiAiTarget("/what?ever")
    with pytest.raises(PiAiLayoutError, match="runtime='deno': use one of node, bun"):
        parse_target("/x?runtime=deno")


@needs_node
def test_a_package_under_another_name_is_checked_with_the_package_option(tmp_path: Path, content_text_cases: list[Case]) -> None:
    write_fork(tmp_path / "node_modules" / "@fork" / "ai", "@fork/ai")
    write_dependency(tmp_path / "node_modules")
    with pytest.raises(PiAiLayoutError, match="holds no @earendil-works/pi-ai"):
        pi_ai_adapter(str(tmp_path), ImplSettings(sandbox="none"))
    assert content_text_cases and statuses(f"pi-ai:{tmp_path}?package=@fork/ai", content_text_cases) == {}
    # A package folder is taken whatever its name.
    assert statuses(f"pi-ai:{tmp_path / 'node_modules' / '@fork' / 'ai'}", content_text_cases) == {}


def test_the_dependency_tree_gives_the_hoisted_node_modules_and_symlinked_packages(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    package = write_fork(workspace / "packages" / "ai", "@fork/ai")
    write_dependency(workspace / "node_modules")
    (workspace / "secret.txt").write_text("not for the port", encoding="utf-8")
    assert dependency_roots(package) == [workspace / "node_modules", package]
    # A symlinked dependency (pnpm, workspaces) is shown at its real place too, inside the tree.
    store = workspace / "packages" / "dep-join"
    shutil.move(workspace / "node_modules" / "dep-join", store)
    (workspace / "node_modules" / "dep-join").symlink_to(store)
    assert set(dependency_roots(package)) == {workspace / "node_modules", package, store}
    # A link out of the tree (to the grader's files) is not followed: the sandbox never shows them.
    outside = write_package(tmp_path / "grader" / "secrets", "dep-join")
    (workspace / "node_modules" / "dep-join").unlink()
    (workspace / "node_modules" / "dep-join").symlink_to(outside)
    assert dependency_roots(package) == [package]


@needs_node
@needs_bwrap
def test_a_workspace_package_imports_its_hoisted_dependency_inside_the_sandbox(tmp_path: Path, content_text_cases: list[Case]) -> None:
    workspace = tmp_path / "ws"
    package = write_fork(workspace / "packages" / "ai", "@fork/ai")
    write_dependency(workspace / "node_modules")
    assert statuses(f"pi-ai:{package}", content_text_cases, sandbox="bwrap") == {}


@needs_node
def test_idle_detection_does_not_trust_an_empty_resource_list(tmp_path: Path) -> None:
    """Bun lists no active resources ever: read as idle, every wait would end before the stream produced anything."""
    settling = REPO / "conformance" / "adapters" / "node" / "settling.mjs"
    script = tmp_path / "probe.mjs"
    script.write_text(
        "if (process.argv[2] === 'empty') process.getActiveResourcesInfo = () => [];\n"
        f"const {{ settleOrIdle }} = await import({json.dumps(settling.as_uri())});\n"
        "const started = Date.now();\n"
        "const settled = await settleOrIdle(new Promise(() => {}), 0.4, new Promise(() => {}));\n"
        "console.log(JSON.stringify({ settled, ms: Date.now() - started }));\n",
        encoding="utf-8",
    )

    def wait(mode: str) -> dict[str, object]:
        result = subprocess.run([str(NODE), str(script), mode], capture_output=True, text=True, timeout=30, check=True)
        return dict(json.loads(result.stdout))

    honest, empty = wait("honest"), wait("empty")
    assert honest["settled"] is False and int(str(honest["ms"])) < 300  # idle at once: nothing can settle it
    assert empty["settled"] is False and int(str(empty["ms"])) >= 380  # not trusted: waited for the deadline


@needs_bun
def test_the_pi_ai_adapter_runs_under_bun(tmp_path: Path, content_text_cases: list[Case]) -> None:
    write_fork(tmp_path / "node_modules" / "@earendil-works" / "pi-ai", "@earendil-works/pi-ai")
    write_dependency(tmp_path / "node_modules")
    assert statuses(f"pi-ai:{tmp_path}?runtime=bun", content_text_cases) == {}


@needs_bun
def test_the_course_adapter_runs_under_bun_through_cmd() -> None:
    adapter_file = REPO / "conformance" / "adapters" / "node" / "pi_course_adapter.mjs"
    modules = modules_dir(REPO / "tests" / "support" / "js" / "course-correct")
    suite = load_suite()
    cases = [case for case in suite.cases if case.operation in ("text_of", "event_stream", "scripted_model")][:60]
    failed = statuses(f"cmd:{BUN} {adapter_file} {modules}", cases)
    assert cases and failed == {}, failed


@needs_node
def test_a_package_that_cannot_be_imported_errors_every_case(tmp_path: Path, content_text_cases: list[Case]) -> None:
    write_fork(tmp_path, "@fork/ai")  # its dependency is not installed
    adapter = pi_ai_adapter(str(tmp_path), ImplSettings(sandbox="none"))
    try:
        outcomes = [run_alone(adapter, case) for case in content_text_cases]
    finally:
        adapter.close()
    assert {outcome.status for outcome in outcomes} == {"errored"}, [outcome.message for outcome in outcomes]
    assert all("failed to import" in outcome.message and "dep-join" in outcome.message for outcome in outcomes)
