"""``fixtures new``: append a scaffold case, with a fresh id, to the right fixture file.

The scaffold has every field a case needs, with ``TODO:`` placeholders where the author
must decide (clauses, description, input, expected values). It fails ``fixtures lint``
until each placeholder is filled in. The file's existing text is kept byte for byte: the
scaffold is text appended after the last case, never a re-dump of the YAML.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from conformance.authoring.files import FixtureText, read
from conformance.authoring.ids import shared_words
from conformance.authoring.lint import HEADER_PREFIX, SCHEMA_FILE
from conformance.authoring.scaffold_bodies import BODIES, DEFAULT_PREFIX, EXAMPLE_CLAUSE
from conformance.loading import shared_files
from conformance.loading.loader import fixture_files
from conformance.model.cases import LABS, OPERATIONS, PURE_OPERATIONS
from conformance.model.paths import fixtures_dir, schemas_dir
from conformance.model.profiles import COURSE

_CASE_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

# The lab(s) each operation belongs to (spec/fixture-format.md; the schema enforces it too).
_LABS_OF: dict[str, tuple[str, ...]] = {
    **{operation: ("3.1",) for operation in PURE_OPERATIONS},
    "event_stream": ("3.2",),
    "scripted_model": ("4.1", "4.2"),
    "to_provider_messages": ("5.1",),
    "to_provider_tools": ("5.1",),
    "provider_model_stream": ("5.2",),
    "provider_fetch_stream": ("5.3",),
    "object_schema": ("6.1",),
    "tool_registry": ("6.2",),
    "execute_tool_call": ("6.3",),
    "run_agent_loop": ("7.1", "7.2", "7.3", "7.4", "7.5"),
    "reduce_agent_state": ("9.1",),
    "run_agent": ("9.2", "9.3", "9.4", "9.5"),
}


class ScaffoldError(ValueError):
    """The scaffold cannot be placed: unknown operation, wrong lab, ambiguous or invalid file."""


@dataclass(frozen=True)
class Scaffolded:
    """Where a scaffold case was written."""

    case_id: str
    path: Path
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def scaffold_case(
    root: Path, operation: str, lab: str, case_id: str | None = None, slug: str | None = None, file: str | None = None
) -> Scaffolded:
    """Append a scaffold case for ``operation`` and ``lab`` and return where it went."""
    check_operation(operation, lab)
    texts = [read(path, root) for path in fixture_files(root)]
    taken = {str(raw["id"]) for fixture in texts for _, raw in fixture.cases if isinstance(raw.get("id"), str)}
    target = _target_file(root, texts, operation, lab, file, case_id or slug)
    existing = next((fixture for fixture in texts if fixture.path.resolve() == target.resolve()), None)
    if existing is None and target.exists():
        existing = read(target, root)
    if existing is not None and existing.document is None:
        raise ScaffoldError(f"{existing.display} is not valid YAML; fix it first (pi-conformance fixtures lint)")
    stated = existing.data.get("profile", "course") if existing is not None and isinstance(existing.data, dict) else "course"
    if stated != "course":
        assert existing is not None
        listed = ",".join(str(name) for name in stated) if isinstance(stated, list) else str(stated)
        raise ScaffoldError(f"{existing.display} is a file of profile {listed}; scaffold its cases with --profile {listed}")
    chapter = existing.data.get("chapter") if existing is not None and isinstance(existing.data, dict) else None
    if chapter is not None and chapter != f"0{lab[0]}":
        raise ScaffoldError(f"{existing.display if existing else target} is a chapter {chapter} file; lab {lab} cases go in ch0{lab[0]}/")
    chosen = choose_id(case_id, slug, _prefix(existing, texts, operation), taken)
    if existing is None:
        return _new_file(target, chosen, operation, lab)
    return _append(existing, chosen, operation, lab)


def check_operation(operation: str, lab: str) -> None:
    """A course operation, a course lab, and the operation belongs to that lab."""
    if operation not in OPERATIONS:
        raise ScaffoldError(f"unknown operation {operation!r}; one of: {', '.join(sorted(OPERATIONS))}")
    if lab not in LABS:
        raise ScaffoldError(f"unknown lab {lab!r}; one of: {', '.join(LABS)}")
    if lab not in _LABS_OF[operation]:
        raise ScaffoldError(f"{operation} belongs to lab {' or '.join(_LABS_OF[operation])}, not {lab}")


def _target_file(root: Path, texts: list[FixtureText], operation: str, lab: str, file: str | None, wanted_id: str | None) -> Path:
    """The file named by ``--file``, else the one topic file that holds this operation and lab."""
    if file is not None:
        return named_file(root, file)
    holding = [fixture for fixture in texts if _holds(fixture, operation, lab)]
    candidates = [fixture for fixture in holding if not shared_files.is_shared(fixture.data)]
    if not candidates and holding:
        raise ScaffoldError(_only_shared(root, holding, texts, operation, lab))
    if wanted_id and len(candidates) > 1:
        # Several topic files share the operation and lab: the id's prefix picks one.
        matching = [fixture for fixture in candidates if wanted_id.startswith(_prefix(fixture, texts, operation))]
        longest = max((len(_prefix(fixture, texts, operation)) for fixture in matching), default=0)
        candidates = [fixture for fixture in matching if len(_prefix(fixture, texts, operation)) == longest] or candidates
    if len(candidates) == 1:
        return candidates[0].path
    if not candidates:
        raise ScaffoldError(f"no fixture file has {operation} cases for lab {lab}; name one with --file (e.g. ch0{lab[0]}/topic.yaml)")
    listing = "\n  ".join(f"{fixture.display}  {_topic(fixture)}(ids {_prefix(fixture, texts, operation)}…)" for fixture in candidates)
    raise ScaffoldError(f"several files hold {operation} cases for lab {lab}; choose one with --file:\n  {listing}")


def _holds(fixture: FixtureText, operation: str, lab: str) -> bool:
    """Whether the file has a course case of ``operation`` in ``lab`` (in a shared file: the course's view of it)."""
    shared = shared_files.is_shared(fixture.data)
    for _, raw in fixture.cases:
        block = raw.get(COURSE.name) if shared else None
        view = {**raw, **block} if isinstance(block, dict) else raw
        if view.get("operation") == operation and view.get("lab") == lab:
            return True
    return False


def _only_shared(root: Path, holding: list[FixtureText], texts: list[FixtureText], operation: str, lab: str) -> str:
    """Where the operation's cases of this lab live when only shared files hold them: the command that adds one there."""
    lines = [f"no course-only file has {operation} cases for lab {lab}; they live in a file shared with other profiles:"]
    where = "" if root.resolve() == fixtures_dir().resolve() else f" --fixtures {shlex.quote(str(root))}"
    for fixture in holding:
        names = ",".join(shared_files.profiles_of(fixture.data))
        relative = fixture.path.resolve().relative_to(root.resolve()).as_posix()
        lines.append(f"  {fixture.display}  {_topic(fixture)}(ids {_prefix(fixture, texts, operation)}…)")
        lines.append(
            f"    a case there: pi-conformance fixtures new{where} --profile {names} --operation {operation} --lab {lab} --file {relative}"
        )
    lines.append(f"  a course-only case instead: name a new file with --file (e.g. ch0{lab[0]}/topic.yaml)")
    return "\n".join(lines)


def named_file(root: Path, file: str) -> Path:
    """The fixture file ``--file`` names: as given when it exists or is absolute, else under ``root``."""
    named = Path(file)
    path = named if named.is_absolute() or named.exists() else root / named
    if path.suffix not in (".yaml", ".yml"):
        raise ScaffoldError(f"{file}: a fixture file ends in .yaml")
    return path


def _topic(fixture: FixtureText) -> str:
    """``topic: ...`` of the file, quoted for a listing (empty when it has none)."""
    topic = fixture.data.get("topic") if isinstance(fixture.data, dict) else None
    return f"topic {topic!r} " if isinstance(topic, str) and topic else ""


def _prefix(fixture: FixtureText | None, texts: list[FixtureText], operation: str) -> str:
    """The id prefix the file uses for this operation: the words its ids share, e.g. ``sm-abort-``."""

    def ids_in(files: list[FixtureText], any_operation: bool = False) -> list[str]:
        return [
            str(raw["id"])
            for other in files
            for _, raw in other.cases
            if isinstance(raw.get("id"), str) and (any_operation or raw.get("operation") == operation)
        ]

    # This file's ids for the operation, else all its ids, else the operation's ids anywhere.
    ids = (ids_in([fixture]) or ids_in([fixture], any_operation=True)) if fixture else []
    ids = ids or ids_in(texts)
    shared = shared_words(ids)
    return "-".join(shared) + "-" if shared else DEFAULT_PREFIX[operation]


def choose_id(case_id: str | None, slug: str | None, prefix: str, taken: set[str]) -> str:
    """The new case's id: ``--id``, the prefix and ``--slug``, or the prefix and a fresh counter."""
    if case_id is not None and slug is not None:
        raise ScaffoldError("give --id or --slug, not both")
    if slug is not None:
        if not _SLUG.match(slug):
            raise ScaffoldError(f"--slug {slug!r}: lowercase words joined by '-'")
        case_id = prefix + slug
    if case_id is not None:
        if not _CASE_ID.match(case_id):
            raise ScaffoldError(f"--id {case_id!r}: lowercase words joined by '-' (^[a-z0-9]+(-[a-z0-9]+)*$)")
        if case_id in taken:
            raise ScaffoldError(f"id {case_id!r} is taken; ids are never reused")
        return case_id
    # A counter after the prefix: fresh, and never one that an existing case already has.
    counter = 1 + sum(1 for identifier in taken if identifier.startswith(prefix))
    while f"{prefix}{counter}" in taken:
        counter += 1
    return f"{prefix}{counter}"


def course_lines(case_id: str, operation: str, lab: str) -> list[str]:
    """The keys of a course scaffold case, one per line, unindented."""
    return [
        f"id: {case_id}",
        f'lab: "{lab}"',
        f'clauses: ["TODO: the spec/spec.md clause ids this case checks, e.g. {EXAMPLE_CLAUSE[operation]}"]',
        'description: "TODO: one line, why this case exists (the bug or trap it catches)"',
        f"operation: {operation}",
        *BODIES[operation].splitlines(),
    ]


def render(case_id: str, operation: str, lab: str, dash_column: int = 2, key_column: int = 4) -> str:
    """The course scaffold case's text, as a block sequence item at the given columns."""
    return render_lines(course_lines(case_id, operation, lab), dash_column, key_column)


def render_lines(lines: list[str], dash_column: int = 2, key_column: int = 4) -> str:
    """A case's key lines as a block sequence item at the given columns."""
    first = " " * dash_column + "-" + " " * (key_column - dash_column - 1) + lines[0]
    return "\n".join([first, *(" " * key_column + line if line else "" for line in lines[1:])]) + "\n"


def _append(fixture: FixtureText, case_id: str, operation: str, lab: str) -> Scaffolded:
    return append_lines(fixture, case_id, course_lines(case_id, operation, lab))


def append_lines(fixture: FixtureText, case_id: str, lines: list[str]) -> Scaffolded:
    """Append the case made of ``lines`` after the file's last case, keeping its text byte for byte."""
    assert fixture.document is not None
    cases = fixture.document.root.get("cases") if fixture.document.root is not None else None
    if cases is None or cases.kind != "sequence" or cases.flow or not cases.items:
        raise ScaffoldError(f"{fixture.display}: `cases` is not a block list of cases; add the case by hand")
    dash_column = cases.column
    key_column = cases.items[0].column
    text = fixture.text
    # Insert after the line where the last case ends: the end of the file when `cases` is last.
    end_of_line = text.find("\n", cases.end)
    at = len(text) if end_of_line < 0 else end_of_line + 1
    before = text[:at] if text[:at].endswith("\n") or not text[:at] else text[:at] + "\n"
    separator = "" if before.endswith("\n\n") else "\n"
    block = separator + render_lines(lines, dash_column, key_column)
    fixture.path.write_text(before + block + text[at:], encoding="utf-8")
    line = before.count("\n") + 1 + len(separator)
    return Scaffolded(case_id, fixture.path, line)


def _new_file(path: Path, case_id: str, operation: str, lab: str) -> Scaffolded:
    """A new topic file: schema header, chapter, a topic placeholder and the case."""
    return new_file(path, case_id, [f'chapter: "0{lab[0]}"'], course_lines(case_id, operation, lab))


def new_file(path: Path, case_id: str, file_keys: list[str], lines: list[str], schema_file: str = SCHEMA_FILE) -> Scaffolded:
    """A new topic file: the schema header (a sibling's, else ``schema_file``), ``file_keys``, a topic placeholder and the case."""
    siblings = [sibling for sibling in sorted(path.parent.glob("*.y*ml")) if sibling.is_file()] if path.parent.is_dir() else []
    # A sibling's header keeps the folder's way of naming the schema, if it names this file's schema.
    headers = (_first_line(sibling) for sibling in siblings)
    header = next((line for line in headers if line.startswith(HEADER_PREFIX) and line.endswith("/" + schema_file)), None)
    if header is None:
        # Relative, so that it keeps resolving in a checkout moved elsewhere and in an exported bundle.
        header = HEADER_PREFIX + Path(os.path.relpath(schemas_dir() / schema_file, path.parent.resolve())).as_posix()
    head_lines = [header, *file_keys, 'topic: "TODO: what the cases in this file are about"', "cases:"]
    head = "\n".join(head_lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + render_lines(lines), encoding="utf-8")
    return Scaffolded(case_id, path, len(head_lines) + 1)


def _first_line(path: Path) -> str:
    with path.open(encoding="utf-8") as handle:
        return handle.readline().rstrip("\n")
