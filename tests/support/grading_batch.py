"""Generate a class of submissions from the JavaScript test projects under ``tests/support/js``.

Used by ``tests/farm/test_grading_batch.py`` and ``bench/batch_grading.py``. Unchanged projects
are symlinked (cheap); the misbehaving ones (hanging, crashing, empty) are copies of
``course-correct`` with one textual patch, checked to apply exactly once.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.support.js_variants import ensure_generated
from tests.support.paths import REPO

JS = REPO / "tests" / "support" / "js"
CORRECT = JS / "course-correct"
DIST = Path("packages/pi-course/dist/src")

#: Variant folder -> the labs whose points its bug costs: only the lab that owns the bug, since
#: a later lab's cases that fail because of it are charged there (lab31-only: every lab after
#: 3.1, which it did not implement).
BROKEN = {
    "textof-tool-names": {"3.1"},
    "replay-last-timestamp": {"3.1"},
    "replay-tombstones": {"3.1"},
    "error-needs-end": {"3.2"},
    "result-is-a-copy": {"3.2"},
    "requests-by-reference": {"4.1"},
    "shared-partial": {"4.1"},
    "exhaustion-throws": {"4.2"},
    "abort-checked-early": {"4.2"},
    "production-not-deferred": {"4.2"},
    "lab31-only": {"3.2", "4.1", "4.2"},
    "lab41-only": {"4.2"},
}


@dataclass(frozen=True)
class Expected:
    """What grading one generated submission must give."""

    status: str
    #: Labs below full marks (None: not checked, e.g. a crash that costs whatever it costs).
    labs_lost: frozenset[str] | None


def patched_copy(target: Path, file: str, find: str, replace: str) -> None:
    """A copy of course-correct at ``target`` whose compiled ``file`` has its one ``find`` replaced."""
    shutil.copytree(CORRECT, target, symlinks=True)
    path = target / DIST / file
    text = path.read_text(encoding="utf-8")
    if text.count(find) != 1:
        raise RuntimeError(f"{file}: expected exactly one {find!r} in course-correct")
    path.write_text(text.replace(find, replace), encoding="utf-8")


_TYPES_EXPORTS = ("text", "userMessage", "assistantMessage", "textOf", "systemMessageText", "currentSystemMessage")
_SKELETON = {
    "types.js": "".join(
        f'export function {name}() {{\n  throw new Error("not implemented in lab 3.1");\n}}\n'
        for name in (*_TYPES_EXPORTS, "currentSystemPrompt")
    ),
    "event-stream.js": (
        "export class EventStream {\n"
        '  constructor() {\n    throw new Error("not implemented in lab 3.1");\n  }\n}\n'
        "export class AssistantMessageEventStream extends EventStream {}\n"
    ),
    "scripted-model.js": ('export class ScriptedModel {\n  constructor() {\n    throw new Error("not implemented in lab 4.1");\n  }\n}\n'),
}


#: tsconfig options for the tests' TypeScript projects: only the ES2022 library and no checks of
#: declaration files. What the tests check is the build machinery and errors in their own one
#: file, and tsc then starts in 0.4 s of CPU instead of 2.1 s.
FAST_TSC_OPTIONS = {"lib": ["es2022"], "types": [], "skipLibCheck": True}


def _type_error_copy(target: Path) -> None:
    shutil.copytree(CORRECT, target, symlinks=True)
    package = target / "packages" / "pi-course"
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["build"] = "tsc -p ."
    (package / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    options = {"target": "es2022", "module": "es2022", "outDir": "tsc-out", "strict": True, **FAST_TSC_OPTIONS}
    (package / "tsconfig.json").write_text(json.dumps({"compilerOptions": options, "include": ["src"]}), encoding="utf-8")
    (package / "src").mkdir()
    (package / "src" / "types.ts").write_text('export const answer: number = "forty-two";\n', encoding="utf-8")


def _write_skeleton(target: Path) -> None:
    shutil.copytree(CORRECT, target, symlinks=True)
    for name, text in _SKELETON.items():
        (target / DIST / name).write_text(text, encoding="utf-8")


def make_batch(root: Path, correct_copies: int = 5) -> dict[str, Expected]:
    """Fill ``root`` with submissions; what each must grade to, by folder name."""
    ensure_generated()  # the broken variants are linked from tests/support/js/variants
    root.mkdir(parents=True, exist_ok=True)
    expected: dict[str, Expected] = {}
    for index in range(1, correct_copies + 1):
        (root / f"correct-{index:02d}").symlink_to(CORRECT, target_is_directory=True)
        expected[f"correct-{index:02d}"] = Expected("ok", frozenset())
    for name, labs in BROKEN.items():
        (root / name).symlink_to(JS / "variants" / name, target_is_directory=True)
        expected[name] = Expected("ok", frozenset(labs))
    (root / "build-fails").symlink_to(JS / "variants" / "build-fails", target_is_directory=True)
    expected["build-fails"] = Expected("build-failed", frozenset({"3.1", "3.2", "4.1", "4.2"}))
    # textOf loops forever on assistant messages: those cases time out, the process is killed
    # and restarted, the transport gives up on text_of after three timeouts in a row (eight
    # assistant cases come one after another), and the grader retries each given-up case on
    # its own, so every case that passes alone still earns its points. (Looping on every
    # role but system hung 25 cases instead of 15, for 3 s more CPU and nothing more shown.)
    patched_copy(
        root / "hangs-in-textof",
        "types.js",
        "export function textOf(message) {\n",
        'export function textOf(message) {\n  if (message.role === "assistant") for (;;) {}\n',
    )
    expected["hangs-in-textof"] = Expected("timed-out", frozenset({"3.1"}))
    # scripted-model.js never finishes importing: every ScriptedModel case hangs. Nothing is
    # left to run once the import waits, so the adapter answers "hung" at once (no timeout).
    patched_copy(
        root / "import-never-resolves",
        "scripted-model.js",
        "export const EXHAUSTED_MESSAGE",
        "await new Promise(() => {});\nexport const EXHAUSTED_MESSAGE",
    )
    expected["import-never-resolves"] = Expected("hung", frozenset({"4.1", "4.2"}))
    # Importing scripted-model.js kills the process: every ScriptedModel case errors.
    patched_copy(
        root / "crashes-on-import",
        "scripted-model.js",
        "export const EXHAUSTED_MESSAGE",
        "process.exit(3);\nexport const EXHAUSTED_MESSAGE",
    )
    expected["crashes-on-import"] = Expected("crashed", frozenset({"4.1", "4.2"}))
    # push() delivers nothing: every stream stays silent. Each waiting step ends as soon as
    # the event loop is idle, so this costs seconds, not minutes; it is a hang, never "ok".
    patched_copy(root / "never-emits", "event-stream.js", "    if (this.#closed) return;\n    this.#buffer.push(event);", "    return;")
    expected["never-emits"] = Expected("hung", frozenset({"3.2"}))
    # Junk written straight to the protocol's stdout (around the adapter's console redirect)
    # when the ScriptedModel module loads: its cases error, the other labs are unaffected.
    patched_copy(
        root / "stdout-junk",
        "scripted-model.js",
        "export const EXHAUSTED_MESSAGE",
        'import { writeSync } from "node:fs";\nwriteSync(1, "junk that is not JSON\\n");\nexport const EXHAUSTED_MESSAGE',
    )
    expected["stdout-junk"] = Expected("crashed", frozenset({"4.1", "4.2"}))
    # The course's starting point: every function and class is a placeholder that throws
    # "not implemented": nothing to grade, no points, and nothing mistaken for a bug.
    _write_skeleton(root / "skeleton")
    expected["skeleton"] = Expected("no-cases", frozenset({"3.1", "3.2", "4.1", "4.2"}))
    # Compiled modules that pass everything, but TypeScript source that does not type-check:
    # grading builds by default (with the pinned tsc), so this is a build failure, not 100.
    _type_error_copy(root / "type-error")
    expected["type-error"] = Expected("build-failed", frozenset({"3.1", "3.2", "4.1", "4.2"}))
    # A folder with nothing of a course project in it: reported as such, nothing is run or fetched.
    (root / "not-a-project").mkdir()
    (root / "not-a-project" / "notes.txt").write_text("my homework is somewhere else\n", encoding="utf-8")
    expected["not-a-project"] = Expected("not-a-project", frozenset({"3.1", "3.2", "4.1", "4.2"}))
    # A repository that builds but holds no compiled module at all.
    empty = root / "empty-repo"
    shutil.copytree(CORRECT, empty, symlinks=True)
    shutil.rmtree(empty / "packages" / "pi-course" / "dist")
    expected["empty-repo"] = Expected("no-cases", frozenset({"3.1", "3.2", "4.1", "4.2"}))
    (root / ".hidden-not-a-submission").mkdir()
    return expected


def write_expectations(root: Path, expected: dict[str, Expected]) -> None:
    """Save the expectations next to a generated batch (for looking at it by hand)."""
    data = {name: {"status": value.status, "labs_lost": sorted(value.labs_lost or [])} for name, value in expected.items()}
    (root.parent / f"{root.name}.expected.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
