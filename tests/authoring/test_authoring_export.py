"""``fixtures export``: a bundle that loads with plain Python, and a hash that follows content, not layout."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.authoring.export import LOAD_BUNDLE, ExportRefused, export_bundle
from conformance.model.version import spec_version
from tests.support.fixture_scratch import run_fixtures, scratch
from tests.support.paths import REPO

# Enough to load the bundle: the standard library and PyYAML, nothing of this project.
ALLOWED_IMPORTS = {"hashlib", "json", "pathlib", "yaml"}


def manifest(bundle: Path) -> dict[str, Any]:
    """The bundle's manifest.json, parsed (JSON: walked key by key)."""
    data = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def hashes(bundle: Path) -> dict[str, str]:
    cases = manifest(bundle)["cases"]
    assert isinstance(cases, list)
    return {entry["id"]: entry["sha256"] for entry in cases}


def test_the_bundle_holds_yaml_json_schemas_spec_and_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = scratch(tmp_path)
    bundle = tmp_path / "bundle"
    code, out, err = run_fixtures(capsys, "export", "--fixtures", str(root), str(bundle))
    assert code == 0, err
    assert f"23 cases, spec and fixtures {spec_version()}, content hash " in out
    data = manifest(bundle)
    assert data["bundle_version"] == data["spec_version"] == spec_version()
    [entry] = [entry for entry in data["cases"] if entry["id"] == "make-text-empty"]
    assert entry == {
        "id": "make-text-empty",
        "file": "fixtures/ch03/constructors.yaml",
        "json_file": "json/ch03/constructors.json",
        "chapter": "03",
        "lab": "3.1",
        "operation": "make_text",
        "clauses": ["IR-MAKE-1", "IR-BLOCK-1"],
        "features": [],
        "sha256": entry["sha256"],
    }
    for relative in ("fixtures/ch03/constructors.yaml", "fixtures/ch04/exhaustion.yaml"):
        assert (bundle / relative).read_bytes() == (root / relative.removeprefix("fixtures/")).read_bytes()
        from_yaml = yaml.safe_load((bundle / relative).read_text(encoding="utf-8"))
        json_twin = bundle / "json" / Path(relative.removeprefix("fixtures/")).with_suffix(".json")
        assert json.loads(json_twin.read_text(encoding="utf-8")) == from_yaml  # anchors expanded, same data
    spec_files: tuple[str, ...] = ("spec/spec.md", "spec/fixture-format.md", "spec/protocol.md", "spec/features.yaml")
    spec_files += ("spec/schemas/fixture-file.schema.json",)
    for name in (*spec_files, "CHANGELOG.md"):
        assert (bundle / name).is_file(), name
    # The editors' schema header of every copied fixture file still resolves inside the bundle.
    header = (bundle / "fixtures/ch03/constructors.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert (bundle / "fixtures/ch03" / header.split("$schema=")[1]).resolve() == (
        bundle / "spec/schemas/fixture-file.schema.json"
    ).resolve()


def test_load_bundle_is_short_and_runs_isolated_with_pyyaml_alone(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    bundle = tmp_path / "bundle"
    export_bundle(bundle, root)
    script = bundle / "load_bundle.py"
    assert script.read_text(encoding="utf-8") == LOAD_BUNDLE and len(LOAD_BUNDLE.splitlines()) <= 15
    imported = {
        alias.name.split(".")[0] for node in ast.walk(ast.parse(LOAD_BUNDLE)) if isinstance(node, ast.Import) for alias in node.names
    }
    assert imported <= ALLOWED_IMPORTS and not any(isinstance(node, ast.ImportFrom) for node in ast.walk(ast.parse(LOAD_BUNDLE)))
    # -I: no PYTHONPATH, no user site, no script folder on sys.path; run from elsewhere to rule out the checkout.
    result = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"23 cases, spec and fixtures version {spec_version()}\n"
    ours = "('conformance', 'reference_impl')"
    probe = f"import runpy, sys; runpy.run_path({str(script)!r}); print(sorted(m for m in sys.modules if m.startswith({ours})))"
    result = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0 and result.stdout.endswith("[]\n"), result.stdout + result.stderr
    # A case edited after export no longer matches the manifest.
    constructors = bundle / "fixtures/ch03/constructors.yaml"
    constructors.write_text(constructors.read_text(encoding="utf-8").replace('text: ""', 'text: "x"', 1), encoding="utf-8")
    result = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode != 0 and "differ from manifest.json" in result.stderr


def test_the_hash_changes_exactly_when_a_case_changes(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    export_bundle(tmp_path / "before", root)
    before = manifest(tmp_path / "before")

    # Reformat every file without changing content: block to flow, other quotes, re-dumped, anchors expanded.
    for path in sorted(root.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
        header = text.splitlines()[0]
        path.write_text(header + "\n" + yaml.safe_dump(data, allow_unicode=True, default_flow_style=True, width=60), encoding="utf-8")
    export_bundle(tmp_path / "reformatted", root)
    reformatted = manifest(tmp_path / "reformatted")
    assert reformatted["content_hash"] == before["content_hash"] and hashes(tmp_path / "reformatted") == hashes(tmp_path / "before")

    # Change one expected value of one case: only its hash and the total change.
    path = root / "ch03" / "constructors.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    [case] = [case for case in data["cases"] if case["id"] == "make-text-readme-explanation"]
    case["description"] = case["description"] + " (edited)"
    path.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n" + yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    export_bundle(tmp_path / "edited", root)
    edited = manifest(tmp_path / "edited")
    old, new = hashes(tmp_path / "before"), hashes(tmp_path / "edited")
    assert [case_id for case_id in old if old[case_id] != new[case_id]] == ["make-text-readme-explanation"]
    assert edited["content_hash"] != before["content_hash"]
    assert {key: value for key, value in edited.items() if key not in ("cases", "content_hash")} == {
        key: value for key, value in before.items() if key not in ("cases", "content_hash")
    }


def test_export_refuses_lint_problems_and_folders_it_does_not_own(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ExportRefused, match="not empty"):
        export_bundle(occupied, root)
    with pytest.raises(ExportRefused, match="does not hold a pi-conformance bundle"):
        export_bundle(occupied, root, force=True)
    assert (occupied / "notes.txt").read_text(encoding="utf-8") == "mine"
    bundle = tmp_path / "bundle"
    export_bundle(bundle, root)
    export_bundle(bundle, root, force=True)  # an earlier bundle may be replaced
    path = root / "ch03" / "constructors.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("IR-MAKE-1", "IR-MAKE-99", 1), encoding="utf-8")
    with pytest.raises(ExportRefused, match="IR-MAKE-99"):
        export_bundle(tmp_path / "fresh", root)


def test_spec_and_fixtures_share_one_semantic_version_with_a_changelog_entry() -> None:
    version = spec_version()
    assert version.count(".") == 2
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{version}]" in changelog
