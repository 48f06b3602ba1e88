"""``fixtures export``: a versioned bundle that a port in any language can vendor.

Layout of the bundle::

    manifest.json        versions, one entry per case (with a content hash), the total hash
    fixtures/chNN/*.yaml the fixture files, verbatim (their schema header still resolves)
    json/chNN/*.json     the same files as JSON, anchors expanded
    spec/                spec.md, fixture-format.md, protocol.md and schemas/*.json
    CHANGELOG.md         what changed in each version
    load_bundle.py       loading every case in a few lines of Python with PyYAML alone
    README.md            how to use the bundle

Hashes are over each case's canonical JSON (see :mod:`conformance.yamlio.canonical`), so
they change exactly when a case's content changes, never when only its YAML layout does.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from conformance import __version__
from conformance.authoring.files import read
from conformance.authoring.lint import lint
from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.loading import shared_files
from conformance.loading.loader import fixture_files
from conformance.model.paths import data_root, fixtures_dir, schemas_dir, spec_file
from conformance.model.profiles import COURSE, PI_AI_1
from conformance.model.version import spec_version
from conformance.yamlio import canonical

FORMAT = "pi-conformance-fixtures"
FORMAT_VERSION = 1
SPEC_DOCUMENTS = ("spec.md", "fixture-format.md", "protocol.md", "features.yaml")
TOTAL_HASH_RULE = "sha256 of the canonical JSON of the list of [id, sha256] pairs of every case, sorted by id"

LOAD_BUNDLE = '''\
"""Load every case of this bundle with PyYAML alone, and check each against manifest.json."""
import hashlib
import json
import pathlib

import yaml

root = pathlib.Path(__file__).resolve().parent
manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
cases = [case for path in sorted((root / "fixtures").rglob("*.yaml")) for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]]
canonical = {case["id"]: json.dumps(case, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for case in cases}
hashes = {case_id: hashlib.sha256(text.encode("utf-8")).hexdigest() for case_id, text in canonical.items()}
if hashes != {entry["id"]: entry["sha256"] for entry in manifest["cases"]}:
    raise SystemExit("the cases differ from manifest.json")
print(f"{len(cases)} cases, spec and fixtures version {manifest['bundle_version']}")
'''

README = """\
# pi-conformance fixtures {version}

The conformance cases for the "build your own Pi" message IR (chapter 03) and
`ScriptedModel` (chapter 04), with the spec they check. Vendor this folder and run the cases
with your own test framework:

1. Load the cases: `json/**/*.json` with any JSON parser, or `fixtures/**/*.yaml` with a YAML
   parser (`python load_bundle.py` does it with PyYAML and checks every hash).
2. For each case, run its `operation` on your implementation with its `input` (and, for
   scenarios, play its `steps` in order); build the observation that
   `spec/fixture-format.md` describes.
3. Compare each key of `expect` (or of each step's `expect`) with the observation, using the
   matching rules in `spec/fixture-format.md` (`$type`, `$oneOf`, `$any`).

`manifest.json` lists every case with its lab, chapter, clauses, operation and a SHA-256 of
its canonical JSON (a case of `fixtures/shared/` belongs to every profile its `profile` lists:
its lab and chapter are the course's, `areas` are pi-ai-1's); `content_hash` covers all cases. Compare hashes to see which cases
changed between two versions; `CHANGELOG.md` says why. The spec and the fixtures share one
semantic version (`bundle_version`).
"""


class ExportRefused(RuntimeError):
    """The bundle is not written: lint problems, or a target folder that is not ours to replace."""


def case_entries(root: Path) -> list[JsonObject]:
    """One manifest entry per case, in file order."""
    entries: list[JsonObject] = []
    for path in fixture_files(root):
        fixture = read(path, root)
        relative = path.relative_to(root).as_posix()
        data: JsonObject = fixture.data if isinstance(fixture.data, dict) else {}
        # A shared file's course keys (chapter, lab, features) are read from the course's view of it.
        course_view = shared_files.view_of(data, COURSE).data if shared_files.is_shared(data) else data
        viewed_cases = course_view.get("cases")
        course_cases = {
            str(case.get("id")): case for case in (viewed_cases if isinstance(viewed_cases, list) else []) if isinstance(case, dict)
        }
        profile = data.get("profile", "course")
        for _, raw in fixture.cases:
            viewed = course_cases.get(str(raw.get("id")), raw)
            entry: JsonObject = {
                "id": raw.get("id"),
                "file": f"fixtures/{relative}",
                "json_file": f"json/{Path(relative).with_suffix('.json').as_posix()}",
                "chapter": course_view.get("chapter"),
                "lab": viewed.get("lab"),
                "operation": raw.get("operation"),
                "clauses": raw.get("clauses"),
                "features": viewed.get("features") or [],
                "sha256": canonical.sha256(raw),
            }
            if isinstance(profile, list):  # a shared case: the course's keys above, every profile's clauses
                entry.update(profile=profile, areas=_areas(raw))
            elif profile != "course":  # another profile's case: no chapter or lab, its areas instead
                entry.update(profile=profile)
            entries.append(entry)
    return entries


def _areas(raw: JsonObject) -> JsonValue:
    """The pi-ai-1 areas of a shared case (its block's features)."""
    block = raw.get(PI_AI_1.name)
    return block.get("features", []) if isinstance(block, dict) else []


def content_hash(entries: list[JsonObject]) -> str:
    """The total hash: see :data:`TOTAL_HASH_RULE` (sorted, so moving a case changes nothing)."""
    ordered = sorted((str(entry["id"]), str(entry["sha256"])) for entry in entries)
    pairs: list[JsonValue] = [[identifier, digest] for identifier, digest in ordered]
    return canonical.sha256(pairs)


def manifest(root: Path) -> JsonObject:
    """The manifest of a bundle of the fixtures under ``root``."""
    entries = case_entries(root)
    version = spec_version()
    labs = Counter(str(entry["lab"]) for entry in entries if entry.get("lab") is not None)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "bundle_version": version,
        "spec_version": version,
        "generated_by": f"pi-conformance {__version__}",
        "hash": {"algorithm": "sha256", "canonical_form": canonical.DESCRIPTION, "content_hash_rule": TOTAL_HASH_RULE},
        "content_hash": content_hash(entries),
        "labs": {lab: labs[lab] for lab in sorted(labs)},
        "cases": entries,  # type: ignore[dict-item]
    }


def export_bundle(target: Path, root: Path | None = None, force: bool = False) -> JsonObject:
    """Write the bundle into ``target`` (new or empty; with ``force``, a previous bundle) and return its manifest."""
    root = root or fixtures_dir()
    problems = lint(root)
    if problems:
        raise ExportRefused("the fixtures have lint problems; fix them first:\n  " + "\n  ".join(map(str, problems)))
    _prepare(target, force)
    for path in fixture_files(root):
        relative = path.relative_to(root)
        fixture = read(path, root)
        _copy(path, target / "fixtures" / relative)
        json_path = target / "json" / relative.with_suffix(".json")
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(fixture.data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    for name in SPEC_DOCUMENTS:
        _copy(spec_file().parent / name, target / "spec" / name)
    for document_path in sorted((spec_file().parent / "pi-ai-1").glob("*.md")):  # the pi-ai-1 profile's spec and notes
        _copy(document_path, target / "spec" / "pi-ai-1" / document_path.name)
    for schema in sorted(schemas_dir().glob("*.json")):
        _copy(schema, target / "spec" / "schemas" / schema.name)
    changelog = data_root() / "CHANGELOG.md"
    if changelog.is_file():
        _copy(changelog, target / "CHANGELOG.md")
    document = manifest(root)
    (target / "load_bundle.py").write_text(LOAD_BUNDLE, encoding="utf-8")
    (target / "README.md").write_text(README.format(version=document["bundle_version"]), encoding="utf-8")
    (target / "manifest.json").write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return document


def _prepare(target: Path, force: bool) -> None:
    """Only an empty folder, or (with ``force``) one holding an earlier bundle, is written to."""
    if target.exists() and any(target.iterdir()):
        if not force:
            raise ExportRefused(f"{target} is not empty; use --force to replace an earlier bundle there")
        try:
            previous = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = None
        if not isinstance(previous, dict) or previous.get("format") != FORMAT:
            raise ExportRefused(f"{target} does not hold a pi-conformance bundle (no manifest.json); not replacing it")
        shutil.rmtree(target)
    target.mkdir(parents=True, exist_ok=True)


def _copy(source: Path, destination: Path) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, destination)
