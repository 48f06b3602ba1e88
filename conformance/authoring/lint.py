"""``fixtures lint``: every problem in the fixture files, each at its file and line.

The loader's own checks (schema, ids, clause ids, duplicate ids, values JSON cannot carry)
come first-hand from :func:`conformance.loading.loader.load_suite`; this module adds what only
matters to authors: the schema header, placeholders left by ``fixtures new``, one-line
descriptions, cases that feed the implementation identical inputs, and every lab present
(in a whole suite; a folder of extra cases, such as a held-out set, is linted with
``extra=True`` and need not cover every lab).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

from conformance.authoring import placeholders
from conformance.authoring.expected_values import expected_ir_problems
from conformance.authoring.files import FixtureText, read
from conformance.authoring.ids import shared_words
from conformance.authoring.problems import Problem
from conformance.common.jsontypes import JsonObject
from conformance.judging.bearing import unshowable_hint
from conformance.loading import shared_files, validation_cache
from conformance.loading.file_reading import parsed_once
from conformance.loading.loader import Suite, display_path, fixture_files, load_suite
from conformance.model.cases import LABS, Case
from conformance.model.clauses import Clause, load_clauses
from conformance.model.features import BEYOND_CHAPTER, SOURCES, Feature, load_features
from conformance.model.paths import fixtures_dir
from conformance.model.profiles import DEFAULT_PROFILE, PROFILES, get_profile
from conformance.yamlio import positions as yamltext
from conformance.yamlio.canonical import inputs_key

SCHEMA_FILE = "fixture-file.schema.json"
HEADER_PREFIX = "# yaml-language-server: $schema="
DEFAULT_HEADER = HEADER_PREFIX + "../../spec/schemas/" + SCHEMA_FILE
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://")


def lint(root: Path | None = None, only: Collection[Path] | None = None, extra: bool = False) -> list[Problem]:
    """Every problem under the fixtures folder ``root`` (default: the bundled fixtures), by file and line.

    With ``extra``, ``root`` holds extra cases (a held-out set, a fuzz finding), not a whole
    suite: every check applies but the one that each lab has a case.

    With ``only``, the checks of a file's own text (headers, placeholders, descriptions) read
    just those files; the checks across the suite (loading, ids, inputs, labs) still see every
    file. The fuzzer lints the one case it wrote this way, among fixtures known to be clean.
    """
    root = root or fixtures_dir()
    # Every check runs every time: a cache entry (per user, perhaps another checkout's) never
    # stands in for one, so the same bytes always give the same answer.
    # Each file is parsed once, for every profile's load and for the checks of its text.
    with validation_cache.bypassed(), parsed_once():
        suite = load_suite(root)
        # Every other profile's files are loaded (and checked) against that profile's schema and clauses.
        others = [load_suite(root, profile=name) for name in PROFILES if name != DEFAULT_PROFILE]
        chosen = None if only is None else {path.resolve() for path in only}
        texts = [read(path, root, recover=True) for path in fixture_files(root) if chosen is None or path.resolve() in chosen]
    problems: list[Problem] = []
    # Loader problems caused by a placeholder are replaced by the placeholder's own message.
    placeholder_paths: dict[tuple[str, int], list[str]] = {}
    for fixture in texts:
        problems.extend(_header_problems(fixture))
        # A file's nodes are read only for the line of a problem found in its data.
        for index, raw in fixture.raw_cases:
            found = _placeholder_problems(fixture, index, raw)
            if found:
                placeholder_paths[(fixture.display, fixture.case_node(index).line)] = [path for path, _ in found]
            problems.extend(problem for _, problem in found)
            problems.extend(_description_problems(fixture, index, raw))
        problems.extend(_file_placeholder_problems(fixture))
    for broken in [entry for loaded in (suite, *others) for entry in loaded.broken]:
        covered = placeholder_paths.get((broken.file, broken.line), [])
        for line, message in broken.located_problems():
            if not any(_caused_by(path, message) for path in covered):
                problems.append(Problem(broken.file, line, broken.id, message))
    problems = _once_per_file(problems)
    problems.extend(_duplicate_inputs(suite.cases))
    problems.extend(expected_ir_problems(suite.cases))
    problems.extend(_hint_problems(suite.cases))
    problems.extend(_feature_problems(suite.cases))
    problems.extend(_profile_feature_problems(others))
    problems.extend(_prefix_problems([*suite.cases, *(case for other in others for case in other.cases)]))
    for other in others:
        problems.extend(_duplicate_inputs(other.cases))
        problems.extend(_ids_of_another_profile(other, suite))
    if not extra:
        problems.extend(_missing_labs(suite, root))
    # A shared file's shared form is checked by each of its profiles' loads: report it once.
    unique = list(dict.fromkeys(problems))
    # Stable sort: problems of one line keep the order they were found in.
    return sorted(unique, key=lambda problem: (problem.file, problem.line))


def _hint_problems(cases: list[Case]) -> list[Problem]:
    """A first hint rung no failure can show (spec/fixture-format.md, Hints)."""
    return [Problem(case.file, case.line, case.id, f"hint[0] {why}") for case in cases if (why := unshowable_hint(case)) is not None]


def _once_per_file(problems: list[Problem]) -> list[Problem]:
    """One mistake at one line is said once, as the file's when several cases share it.

    A YAML error or a misspelt file-level key errors every case of the file; an anchored value
    used twice (``*ab1e``), in one case or several, repeats its mistake under other paths.
    """
    groups: dict[tuple[str, int, str], list[Problem]] = {}
    for problem in problems:
        _, _, reason = problem.message.partition(": ")
        groups.setdefault((problem.file, problem.line, reason or problem.message), []).append(problem)
    merged: list[Problem] = []
    for group in groups.values():
        first = group[0]
        shared = len({problem.case_id for problem in group}) > 1
        merged.append(Problem(first.file, first.line, "-", first.message) if shared else first)
    return merged


def _caused_by(placeholder_path: str, message: str) -> bool:
    where, separator, _ = message.partition(": ")
    return bool(separator) and placeholders.covers(placeholder_path, where)


def _header_problems(fixture: FixtureText) -> list[Problem]:
    """The first line must name the file's own schema for YAML language servers, by a path that exists.

    A course file names fixture-file.schema.json, another profile's file its profile's schema, a
    shared file shared-fixture-file.schema.json: an editor checks the file against what it names.
    """
    schema = header_schema(fixture.data)
    wanted = HEADER_PREFIX + "../../spec/schemas/" + schema
    first_line = fixture.text.split("\n", 1)[0].rstrip("\r")
    if not first_line.startswith(HEADER_PREFIX):
        return [Problem(fixture.display, 1, "-", f"first line must be the schema header for editors: {wanted}")]
    target = first_line[len(HEADER_PREFIX) :].strip()
    # A file that does not parse (its YAML error is reported) may be of any kind.
    if target.rsplit("/", 1)[-1] != schema and fixture.parsed:
        return [Problem(fixture.display, 1, "-", f"the schema header names {target!r}, not this file's schema {schema}: {wanted}")]
    if not _URL.match(target) and not (fixture.path.parent / target).is_file():
        return [Problem(fixture.display, 1, "-", f"the schema header's path {target!r} does not exist relative to this file")]
    return []


def header_schema(data: object) -> str:
    """The schema file a fixture file's header names: its profile's, or the shared files' one."""
    if shared_files.is_shared(data):
        return shared_files.SCHEMA
    stated = data.get("profile") if isinstance(data, dict) else None
    profile = PROFILES.get(stated) if isinstance(stated, str) else None
    return profile.fixture_schema if profile is not None else SCHEMA_FILE


def _placeholder_problems(fixture: FixtureText, index: int, raw: JsonObject) -> list[tuple[str, Problem]]:
    case_id = _case_id(raw, fixture, index)
    found: list[tuple[str, Problem]] = []
    for where, value in placeholders.find(raw):
        path = yamltext.format_path(where)
        message = f"{path}: placeholder left by `fixtures new`, fill it in: {value}"
        found.append((path, Problem(fixture.display, yamltext.line_of(fixture.case_node(index), where), case_id, message)))
    return found


def _file_placeholder_problems(fixture: FixtureText) -> list[Problem]:
    if not isinstance(fixture.data, dict) or not fixture.parsed:
        return []
    found: list[Problem] = []
    for key, value in fixture.data.items():
        if key != "cases" and placeholders.is_placeholder(value) and fixture.document is not None and fixture.document.root is not None:
            line = yamltext.line_of(fixture.document.root, [key])
            found.append(Problem(fixture.display, line, "-", f"{key}: placeholder left by `fixtures new`, fill it in: {value}"))
    return found


def _description_problems(fixture: FixtureText, index: int, raw: JsonObject) -> list[Problem]:
    description = raw.get("description")
    # A block scalar (`description: |`) ends in a newline even when it holds one line of text.
    if isinstance(description, str) and "\n" in description:
        line = yamltext.line_of(fixture.case_node(index), ["description"])
        message = "description: must be one line (why this case exists); put details in `hint` or a YAML comment"
        return [Problem(fixture.display, line, _case_id(raw, fixture, index), message)]
    return []


def _case_id(raw: JsonObject, fixture: FixtureText, index: int) -> str:
    identifier = raw.get("id")
    return identifier if isinstance(identifier, str) else f"{fixture.path.stem}::case-{index}"


def _duplicate_inputs(cases: list[Case]) -> list[Problem]:
    """Two cases feeding the implementation the same thing check the same behaviour twice."""
    first: dict[str, Case] = {}
    found: list[Problem] = []
    for case in cases:
        key = inputs_key(case.operation, case.input, case.steps)
        earlier = first.setdefault(key, case)
        if earlier is not case:
            message = (
                f"same operation, input and steps (expects aside) as {earlier.id} at {earlier.location}; "
                "merge the two cases or make the inputs differ"
            )
            found.append(Problem(case.file, case.line, case.id, message))
    return found


def _feature_problems(cases: list[Case]) -> list[Problem]:
    """Feature names a case lists must be in spec/features.yaml; the registry must name real clauses and sources."""
    try:
        registry: dict[str, Feature] = load_features()
    except ValueError as error:
        return [Problem("spec/features.yaml", 0, "-", str(error))]
    clauses = load_clauses()
    return [*_registry_clause_problems(registry, clauses), *_source_problems(clauses), *_case_feature_problems(cases, registry)]


def _registry_clause_problems(registry: Mapping[str, Feature], clauses: Mapping[str, Clause]) -> Iterator[Problem]:
    """Every clause a feature of spec/features.yaml names exists."""
    for feature in registry.values():
        for clause_id in feature.clauses:
            if clause_id not in clauses:
                yield Problem("spec/features.yaml", 0, "-", f"feature {feature.name}: unknown clause id {clause_id!r}")


def _source_problems(clauses: Mapping[str, Clause]) -> Iterator[Problem]:
    """Every ``[beyond-chapter: SOURCE]`` mark of spec/spec.md names a known source."""
    for clause in clauses.values():
        for match in BEYOND_CHAPTER.finditer(clause.text):
            if match["source"] not in SOURCES:
                message = f"{clause.id}: unknown [beyond-chapter: {match['source']}] source; use one of {', '.join(SOURCES)}"
                yield Problem("spec/spec.md", clause.line, "-", message)


def _case_feature_problems(cases: list[Case], registry: Mapping[str, Feature]) -> Iterator[Problem]:
    """Every feature a course case lists is in spec/features.yaml, with a did-you-mean."""
    for case in cases:
        for name in case.features:
            if name not in registry:
                hint = difflib.get_close_matches(name, list(registry), n=1)
                suggestion = f"; did you mean {hint[0]!r}?" if hint else f"; known: {', '.join(sorted(registry))}"
                yield Problem(case.file, case.line, case.id, f"features: unknown feature {name!r} (not in spec/features.yaml){suggestion}")


def _profile_feature_problems(others: list[Suite]) -> list[Problem]:
    """Every feature another profile's case names is one of that profile's areas or functions (its registry entry)."""
    found: list[Problem] = []
    for other in others:
        for case in other.cases:
            profile = get_profile(case.profile)
            known = [*profile.opt_outs]
            for feature in case.features:
                if feature not in known:
                    hint = difflib.get_close_matches(feature, known, n=1)
                    suggestion = f"; did you mean {hint[0]!r}?" if hint else f"; known: {', '.join(known)}"
                    message = f"features: unknown feature {feature!r} of profile {case.profile} (not an area or function of it){suggestion}"
                    found.append(Problem(case.file, case.line, case.id, message))
    return found


def _prefix_problems(cases: list[Case]) -> list[Problem]:
    """An id names its file: it starts with the words (two at most) every other id of the file starts with (`sm-abort-`).

    Only a file with at least two other cases has a convention to read; a shared file's cases
    come from each of its profiles' loads and are counted once.
    """

    by_file: dict[str, dict[str, Case]] = {}
    for case in cases:
        by_file.setdefault(case.file, {}).setdefault(case.id, case)
    found: list[Problem] = []
    for in_file in by_file.values():
        for case in in_file.values():
            others = [identifier for identifier in in_file if identifier != case.id]
            # At most two words (`sm-abort`, `text-of`, `pa-faux`): a few cases may share more by chance.
            prefix = "-".join(shared_words(others)[:2])
            if len(others) >= 2 and prefix and not case.id.startswith(prefix + "-"):
                expected = prefix + "-"
                message = f"id: {case.id!r} does not start with {expected!r}, as every other id of this file does; name it after its file"
                found.append(Problem(case.file, case.line, case.id, message))
    return found


def _missing_labs(suite: Suite, root: Path) -> list[Problem]:
    present = {case.lab for case in suite.cases} | {broken.lab for broken in suite.broken if broken.lab}
    where = display_path(root, root)
    # Outside the bundled suite the folder may be a set of extra cases: say how to lint one.
    bundled = root.resolve() == fixtures_dir().resolve()
    how = "" if bundled else " (a folder of extra cases, such as a held-out set or a fuzz finding: lint it with --extra)"
    return [Problem(where, 0, "-", f"no case for lab {lab}: every lab needs at least one{how}") for lab in LABS if lab not in present]


def _ids_of_another_profile(other: Suite, course: Suite) -> list[Problem]:
    """Ids are unique across profiles too: a baseline or a report names a case by its id alone.

    A shared case (fixtures/shared/) is loaded by each of its profiles at the same place: one case.
    """
    seen = {case.id: case.location for case in course.cases}
    return [
        Problem(case.file, case.line, case.id, f"id: duplicate id, first defined at {seen[case.id]} (profile course)")
        for case in other.cases
        if case.id in seen and seen[case.id] != case.location
    ]
