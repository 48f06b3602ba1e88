"""Scratch fixture folders for the fixture toolkit's tests, and ``pi-conformance fixtures`` run in process."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest

from conformance import cli
from conformance.authoring.files import read
from tests.support.paths import REPO

# Small, self-contained real cases: one file each, every lab present.
DEFAULT_PICKS: dict[str, list[str]] = {
    "ch03/constructors.yaml": ["make-text-readme-explanation", "make-text-empty"],
    "ch03/text-of.yaml": ["text-of-fault-experiment-tool-name-excluded", "text-of-readme-user"],
    "shared/event-stream.yaml": ["stream-end-wakes-waiting-consumer"],
    "ch04/text-turns.yaml": ["sm-text-result-only-never-consumed"],
    "ch04/exhaustion.yaml": ["sm-exhaust-result-without-consume-resolves"],
    "ch05/wire.yaml": ["prov-msg-course-roles"],
    "ch05/model.yaml": ["prov-model-course-first-appearance"],
    "ch05/sse.yaml": ["prov-sse-course-invalid-shape"],
    "ch06/validators.yaml": ["tool-schema-course-parse-null"],
    "ch06/registry.yaml": ["tool-reg-course-initial-list"],
    "ch06/execute.yaml": ["tool-exec-course-success"],
    "ch07/text-stop.yaml": ["loop-course-text-stop"],
    "ch07/round-trip.yaml": ["loop-course-system-prefix"],
    "ch07/skipped.yaml": ["loop-course-skip-length"],
    "ch07/batch.yaml": ["loop-course-gated-batch"],
    "ch07/limits.yaml": ["loop-course-pre-aborted"],
    "ch09/reducer.yaml": ["agent-state-course-run-start"],
    "ch09/agent-runs.yaml": ["agent-course-busy-guard"],
    "ch09/agent-subscribers.yaml": ["agent-course-state-before-notify"],
    "ch09/agent-abort.yaml": ["agent-course-abort-in-run-start"],
    "ch09/agent-queues.yaml": ["agent-course-steering-after-batch"],
}


@functools.cache
def _case_texts(relative: str) -> tuple[str, dict[str, str]]:
    """A bundled fixture file's header, and each case's text by id (parsed once per process)."""
    source = REPO / "fixtures" / relative
    fixture = read(source, source.parent.parent)
    head = fixture.text[: fixture.text.index("\ncases:\n") + len("\ncases:\n")]
    cases: dict[str, str] = {}
    for node, raw in fixture.cases:
        line_start = fixture.text.rfind("\n", 0, node.start) + 1
        cases[str(raw["id"])] = fixture.text[line_start : node.end] + "\n"
    return head, cases


def extract(relative: str, ids: list[str]) -> str:
    """A fixture file holding only the cases ``ids`` of a real file, copied as text (header and all)."""
    head, cases = _case_texts(relative)
    chunks = [text for case_id, text in cases.items() if case_id in ids]
    assert len(chunks) == len(ids), f"missing cases in {relative}"
    return head + "\n".join(chunks)


def scratch(tmp_path: Path, picks: dict[str, list[str]] | None = None) -> Path:
    """``tmp/fixtures`` with the picked cases, and ``tmp/spec/schemas`` so that schema headers resolve."""
    root = tmp_path / "fixtures"
    for relative, ids in (picks or DEFAULT_PICKS).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(extract(relative, ids), encoding="utf-8")
    schemas = tmp_path / "spec" / "schemas"
    schemas.mkdir(parents=True)
    for schema in (REPO / "spec" / "schemas").glob("*fixture-file.schema.json"):
        shutil.copy(schema, schemas)
    return root


def run_fixtures(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``pi-conformance fixtures ARGS`` in process: exit code, stdout, stderr."""
    code = cli.main(["fixtures", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def line_of(path: Path, fragment: str) -> int:
    """1-based line of the first line of ``path`` containing ``fragment``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if fragment in line:
            return number
    raise AssertionError(f"{fragment!r} not in {path}")
