"""Load fixture files into cases, reporting every problem with its file, case and path.

Nothing is dropped silently: an entry that cannot be loaded becomes a :class:`BrokenCase`
that the runner reports as errored, next to the cases that did load.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.common.jsontypes import JsonObject
from conformance.common.value_paths import join_index, join_key
from conformance.loading import case_checks, shared_files, validation_cache
from conformance.loading.file_reading import NodeLines, ReadFile, read_fixture_file
from conformance.model.cases import LABS, BrokenCase, Case
from conformance.model.clauses import Clause, load_profile_clauses
from conformance.model.function_features import derived_features
from conformance.model.input_features import case_input_features
from conformance.model.paths import fixtures_dir
from conformance.model.profiles import DEFAULT_PROFILE, PROFILES, get_profile

if TYPE_CHECKING:  # jsonschema is imported only when a file misses the parsed cache
    from jsonschema.exceptions import ValidationError

FIXTURE_SUFFIXES = (".yaml", ".yml")


@dataclass
class Suite:
    """Every case found under a fixtures folder, loaded or broken."""

    root: Path
    cases: list[Case] = field(default_factory=list)
    broken: list[BrokenCase] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Every loading problem as ``file:line: case-id: message``."""
        return [f"{entry.location}: {entry.id}: {problem}" for entry in self.broken for problem in entry.problems]


def fixture_files(root: Path) -> list[Path]:
    """Fixture files under ``root``, in a stable order."""
    return sorted(path for path in root.rglob("*") if path.suffix in FIXTURE_SUFFIXES and path.is_file())


def load_suite(root: Path | None = None, clauses: Mapping[str, Clause] | None = None, profile: str = DEFAULT_PROFILE) -> Suite:
    """Load and check every fixture file of ``profile`` under ``root`` (default: the bundled fixtures).

    Files of other profiles are left out; ``clauses`` defaults to the profile's registry.
    """
    root = root or fixtures_dir()
    registry = clauses if clauses is not None else load_profile_clauses(profile)
    # Loading allocates many objects and frees few: the cyclic collector's full passes over the
    # growing heap would make it superlinear in the number of cases (104 of them at 100x).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load_suite(root, registry, profile)
    finally:
        if collecting:
            gc.enable()


def _load_suite(root: Path, registry: Mapping[str, Clause], profile: str) -> Suite:
    suite = Suite(root)
    first_seen: dict[str, str] = {}
    for path in fixture_files(root):
        relative = display_path(path, root)
        for entry in _load_file(path, relative, registry, profile):
            if isinstance(entry, Case) and entry.id in first_seen:
                entry = BrokenCase(
                    entry.id,
                    entry.file,
                    entry.line,
                    (f"id: duplicate id, first defined at {first_seen[entry.id]}",),
                    entry.lab,
                    entry.chapter,
                    entry.profile,
                )
            if isinstance(entry, Case):
                first_seen[entry.id] = entry.location
                suite.cases.append(entry)
            else:
                first_seen.setdefault(entry.id, entry.location)
                suite.broken.append(entry)
    return suite


def display_path(path: Path, root: Path) -> str:
    """A fixture file's name in problems and reports: relative to the fixtures folder's parent."""
    try:
        return str(path.resolve().relative_to(root.resolve().parent))
    except ValueError:
        return str(path)


def _load_file(path: Path, relative: str, clauses: Mapping[str, Clause], profile: str = DEFAULT_PROFILE) -> Sequence[Case | BrokenCase]:
    """The file's entries, from the parsed cache when this exact text loaded cleanly before."""
    try:
        data = path.read_bytes()
    except OSError:
        data = None
    key = validation_cache.parsed_key(data, relative, profile, clauses) if data is not None else None
    if key is not None:
        cached = validation_cache.load_parsed(key, path)
        if cached is not None:
            return cached
    entries = list(_parse_file(path, relative, clauses, profile))
    if key is not None and all(isinstance(entry, Case) for entry in entries):  # failures are never cached
        validation_cache.store_parsed(key, entries)
    return entries


def _parse_file(path: Path, relative: str, clauses: Mapping[str, Clause], profile: str = DEFAULT_PROFILE) -> Iterator[Case | BrokenCase]:
    read = read_fixture_file(path, relative, profile)
    if not isinstance(read, ReadFile):
        yield from read
        return
    if read.damage is None:
        yield from _entries_of(read, path, relative, clauses, profile)
        return
    # Not valid YAML: the cases around the mistake are checked too, each reported with it, in file order.
    spoiled = [read.damage.spoil(entry) for entry in _entries_of(read, path, relative, clauses, profile)]
    yield from sorted([*read.damage.blanked, *spoiled], key=lambda entry: entry.line)


def _entries_of(read: ReadFile, path: Path, relative: str, clauses: Mapping[str, Clause], profile: str) -> Iterator[Case | BrokenCase]:
    selected = _select_profile(read.data, read.lines, relative, f"{path.stem}::file", profile)
    if not isinstance(selected, tuple):
        if selected is not None:
            yield selected
        return
    # A shared file is checked as this profile's view of it; problems point into the shared text.
    checked, to_original, envelope_problems = selected
    view = _View(path.stem, relative, profile, read.lines, checked, to_original, shared=checked is not read.data)
    check = _check_file(view, read, envelope_problems)
    cases = checked.get("cases") if isinstance(checked, dict) else None
    if not isinstance(cases, list) or not cases:
        found = check.problems.of_file or [("the file has no list of cases", 1)]
        yield BrokenCase(view.stem_id, relative, 1, tuple(m for m, _ in found), problem_lines=tuple(n for _, n in found))
        return
    if check.problems.of_file:
        yield from _cases_of_broken_file(view, cases, check.problems)
        return
    every_case_loaded = True
    for index, raw in enumerate(cases):
        entry = _case_entry(view, index, raw, check.problems.of_case.get(index, []), clauses, not check.validated_before)
        every_case_loaded = every_case_loaded and isinstance(entry, Case)
        yield entry
    # Remembered as valid only once the loader's own checks passed too: a file remembered
    # after the schemas alone would skip those checks on every later load.
    if check.clean and every_case_loaded:
        validation_cache.remember_valid(check.cache_text)


@dataclass(frozen=True)
class _View:
    """What one profile checks of one fixture file, and how its paths map back into the file."""

    stem: str
    relative: str
    profile: str
    lines: NodeLines
    data: object
    to_original: Callable[[Sequence[str | int]], list[str | int]]
    shared: bool

    @property
    def stem_id(self) -> str:
        """The id of an entry that stands for the whole file."""
        return f"{self.stem}::file"

    @property
    def chapter(self) -> str:
        return str(self.data.get("chapter", "")) if isinstance(self.data, dict) else ""

    def original_line(self, path: Sequence[str | int]) -> int:
        """The line, in the file's own text, of the node at ``path`` in this view."""
        return self.lines.line(self.to_original(path))

    def broken(self, index: int, raw: object, found: list[tuple[str, int]], line: int) -> BrokenCase:
        """Case ``index`` of the file, reported with every problem found for it."""
        case_id = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else None
        return BrokenCase(
            case_id or f"{self.stem}::case-{index}",
            self.relative,
            line,
            tuple(message for message, _ in found),
            _lab_of(raw, self.profile),
            self.chapter,
            self.profile,
            tuple(number for _, number in found),
        )


@dataclass
class _Problems:
    """A file's problems so far, each filed under the case it belongs to, or the file, with its line."""

    lines: NodeLines
    of_file: list[tuple[str, int]] = field(default_factory=list)
    of_case: dict[int, list[tuple[str, int]]] = field(default_factory=dict)

    def add(self, where: Sequence[str | int], message: str) -> None:
        """File a problem under its case with its path inside that case, or under the file."""
        line = self.lines.line(where)
        if len(where) >= 2 and where[0] == "cases" and isinstance(where[1], int):
            self.of_case.setdefault(where[1], []).append((_with_path(where[2:], message), line))
        else:
            self.of_file.append((_with_path(where, message), line))


@dataclass(frozen=True)
class _FileCheck:
    """The file-level checks' result: what they found and whether the file may be remembered valid."""

    problems: _Problems
    cache_text: str
    validated_before: bool
    #: No problem found yet in a file not known valid: remembered once its cases load too.
    clean: bool


def _check_file(view: _View, read: ReadFile, envelope_problems: list[tuple[list[str | int], str]]) -> _FileCheck:
    """Non-JSON values, the shared form's problems, then the schema's (skipped for text known valid)."""
    problems = _Problems(view.lines)
    non_json = list(case_checks.non_json_values(read.data, []))
    for where, message in [*non_json, *envelope_problems]:
        problems.add(where, message)
    cache_text = f"{view.profile}\0{read.text}" if view.shared else read.text
    validated_before = not non_json and not envelope_problems and validation_cache.known_valid(cache_text)
    if not validated_before:
        # A non-JSON value is already reported in plainer words; the schema's complaints on the
        # same branch of the same case (the value, or a parent that no longer matches) follow from it.
        # So is a mistake in a shared case's shared form: its view is checked once that is right.
        earlier_paths = [tuple(where) for where, _ in non_json] + [tuple(where[:2]) for where, _ in envelope_problems]
        # A file-level key the shared form already refused (a misspelt `topic`) is said once, not once more per view.
        envelope_keys = [tuple(where) for where, _ in envelope_problems if where and where[0] != "cases"]
        _add_schema_problems(view, problems, earlier_paths, envelope_keys)
    clean = not non_json and not problems.of_case and not validated_before
    return _FileCheck(problems, cache_text, validated_before, clean)


def _add_schema_problems(
    view: _View, problems: _Problems, earlier_paths: list[tuple[str | int, ...]], envelope_keys: list[tuple[str | int, ...]]
) -> None:
    """The profile's fixture schema's best complaint per path, unless an earlier problem explains it."""
    from conformance.loading import quick_schema, schema_errors

    suffix = f" (profile {view.profile})" if view.shared else ""
    # Values the loader checks itself, in words that name their type (a model event, an upstream type).
    own_paths = [tuple(where) for where in case_checks.own_check_paths(view.data, view.profile)]
    # if/then branches report one mistake several times: keep the best error per path.
    by_path: dict[tuple[str | int, ...], list[ValidationError]] = {}
    for schema_error in quick_schema.errors(get_profile(view.profile).fixture_schema, view.data):
        at = tuple(schema_error.absolute_path)
        if not _under_any(at, own_paths):
            by_path.setdefault(tuple(view.to_original(at)), []).append(schema_error)
    for error_path, errors in by_path.items():
        if errors and not any(_same_branch(error_path, path) for path in earlier_paths):
            reason_path, reason = schema_errors.describe_best(errors)
            original = view.to_original(reason_path)
            if not _under_any(tuple(original), envelope_keys):
                problems.add(original, reason + suffix)


def _under_any(path: tuple[str | int, ...], roots: list[tuple[str | int, ...]]) -> bool:
    return any(path[: len(root)] == root for root in roots)


def _cases_of_broken_file(view: _View, cases: list[object], problems: _Problems) -> Iterator[BrokenCase]:
    """A file-level mistake (a misspelt `topic`) errors every case, each still counted in its lab
    and selectable by id, as a YAML error does."""
    whole = [(f"{message} (a problem of the file: none of its cases can run)", number) for message, number in problems.of_file]
    for index, raw in enumerate(cases):
        yield view.broken(index, raw, problems.of_case.get(index, []) + whole, view.original_line(["cases", index]))


def _case_entry(
    view: _View, index: int, raw: object, problems: list[tuple[str, int]], clauses: Mapping[str, Clause], check_shapes: bool
) -> Case | BrokenCase:
    """Case ``index``, or its broken entry when the schema or the loader's own checks found problems."""
    case_path: list[str | int] = ["cases", index]
    line = view.lines.line(case_path)
    if not problems and isinstance(raw, dict):
        problems = [
            # Said at its path in the file: a shared case's pi-ai-1 input is under `pi-ai-1:`.
            (_with_path(view.to_original([*case_path, *inner])[2:], message), view.original_line([*case_path, *inner]))
            for inner, message in case_checks.semantic_problems(raw, clauses, check_shapes=check_shapes, profile=view.profile)
        ]
    if problems or not isinstance(raw, dict):
        return view.broken(index, raw, problems or [("the case is not a mapping", line)], line)
    steps = raw.get("steps") or []
    return Case(
        id=raw["id"],
        file=view.relative,
        line=line,
        chapter=view.chapter,
        lab=_lab_of(raw, view.profile) or "",
        clauses=tuple(raw["clauses"]),
        description=raw["description"],
        operation=raw["operation"],
        input=raw["input"],
        expect=raw.get("expect"),
        steps=tuple(steps),
        hint=tuple(raw.get("hint") or ()),
        timeout_s=raw.get("timeout_s"),
        features=_features_of(raw, view.profile),
        step_lines=tuple(view.lines.line([*case_path, "steps", i]) for i in range(len(steps))),
        profile=view.profile,
    )


def _features_of(raw: JsonObject, profile: str) -> tuple[str, ...]:
    """The case's features, those its profile derives from it (model.function_features), its input classes (model.input_features)."""
    features = tuple(str(name) for name in raw.get("features") or ())  # type: ignore[union-attr]
    derived = derived_features(profile, str(raw.get("operation")), raw.get("input"), raw.get("expect"))
    features = (*features, *(name for name in derived if name not in features))
    held = case_input_features(get_profile(profile).input_features, raw.get("input"), raw.get("steps"))
    return (*features, *(name for name in held if name not in features))


#: What a profile checks of a file: the data its schema sees, how a path in it maps back into the
#: file, and the problems of a shared file's shared form (path, message).
_Selected = tuple[object, Callable[[Sequence[str | int]], list[str | int]], list[tuple[list[str | int], str]]]


def _select_profile(data: object, lines: NodeLines, relative: str, stem_id: str, profile: str) -> _Selected | BrokenCase | None:
    """This profile's part of the file; None when the file is another profile's, a BrokenCase when it names none."""
    if shared_files.is_shared(data):
        assert isinstance(data, dict)
        names = shared_files.profiles_of(data)
        if profile in names:
            view = shared_files.view_of(data, get_profile(profile))
            return view.data, view.original_path, _envelope_problems(data, names)
        if profile == DEFAULT_PROFILE and not any(name in PROFILES for name in names):
            problem = f"profile: no known profile in {list(names)}; list some of {', '.join(PROFILES)}"
            return BrokenCase(stem_id, relative, lines.line(["profile"]), (problem,))
        return None
    file_profile = data.get("profile", DEFAULT_PROFILE) if isinstance(data, dict) else DEFAULT_PROFILE
    if not isinstance(file_profile, str) or file_profile not in PROFILES:
        # Reported by the default profile's load, so `fixtures lint` shows it exactly once.
        if profile == DEFAULT_PROFILE:
            problem = f"profile: unknown profile {file_profile!r}; one of {', '.join(PROFILES)}, or a list of them"
            return BrokenCase(stem_id, relative, lines.line(["profile"]), (problem,))
        return None
    if file_profile != profile:
        return None
    return data, list, []


def _envelope_problems(data: JsonObject, names: Sequence[str]) -> list[tuple[list[str | int], str]]:
    """Problems of a shared file's shared form: its schema, and each case citing every profile's clauses."""
    from conformance.loading import quick_schema, schema_errors

    by_path: dict[tuple[str | int, ...], list[ValidationError]] = {}
    for schema_error in quick_schema.errors(shared_files.SCHEMA, data):
        # The schema describes a case's input, expectations and steps for editors; each profile's
        # view checks them (and says which profile objects), so they are not said twice here.
        if not shared_files.checked_by_views(list(schema_error.absolute_path)):
            by_path.setdefault(tuple(schema_error.absolute_path), []).append(schema_error)
    found = [(list(where), reason) for where, reason in (schema_errors.describe_best(errors) for errors in by_path.values())]
    cases = data.get("cases")
    for index, case in enumerate(cases if isinstance(cases, list) else []):
        if isinstance(case, dict):
            found.extend((["cases", index, *where], message) for where, message in shared_files.case_problems(case, names))
    return found


def _lab_of(raw: object, profile: str) -> str | None:
    """The course's lab; for another profile, the case's first feature (its area), which reports group by."""
    if not isinstance(raw, dict):
        return None
    if profile != DEFAULT_PROFILE:
        features = raw.get("features")
        return str(features[0]) if isinstance(features, list) and features else None
    return raw.get("lab") if raw.get("lab") in LABS else None


def _with_path(where: Iterable[str | int], message: str) -> str:
    inner = _format_path(where)
    return f"{inner}: {message}" if inner else message


def _same_branch(first: tuple[str | int, ...], second: tuple[str | int, ...]) -> bool:
    """Both paths lie inside one case and one of them contains the other."""
    shorter = min(len(first), len(second))
    return shorter >= 2 and first[0] == "cases" and first[:shorter] == second[:shorter]


def _format_path(parts: Iterable[str | int]) -> str:
    path = ""
    for part in parts:
        path = join_index(path, part) if isinstance(part, int) else join_key(path, part)
    return path
