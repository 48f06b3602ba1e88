"""Load fixture files into cases, reporting every problem with its file, case and path.

Nothing is dropped silently: an entry that cannot be loaded becomes a :class:`BrokenCase`
that the runner reports as errored, next to the cases that did load.
"""

from __future__ import annotations

import gc
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from conformance import pi_ai_shapes, shared_files, validation_cache
from conformance.cases import LABS, BrokenCase, Case
from conformance.clauses import Clause, load_profile_clauses
from conformance.function_features import function_feature
from conformance.jsontypes import JsonObject
from conformance.matcher import join_index, join_key
from conformance.paths import fixtures_dir
from conformance.profiles import DEFAULT_PROFILE, PI_AI_1, PROFILES, get_profile

if TYPE_CHECKING:  # yaml and jsonschema are imported only when a file misses the parsed cache
    import yaml
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


class _Lines:
    """Line numbers of the nodes of a composed YAML document, looked up by path."""

    def __init__(self, node: yaml.Node | None) -> None:
        self._root = node

    def line(self, path: Iterable[str | int]) -> int:
        import yaml

        node = self._root
        line = node.start_mark.line + 1 if node is not None else 1
        for part in path:
            child: yaml.Node | None = None
            key_line: int | None = None
            if isinstance(node, yaml.MappingNode):
                pair = next(((key, value) for key, value in node.value if key.value == part), None)
                if pair is not None:
                    # A problem about a key (a typo) is on the key's line, not its block value's.
                    key_line, child = pair[0].start_mark.line + 1, pair[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                child = node.value[part]
            if child is None:
                break
            node = child
            line = key_line if key_line is not None else node.start_mark.line + 1
        return line


def _load_file(path: Path, relative: str, clauses: Mapping[str, Clause], profile: str = DEFAULT_PROFILE) -> Sequence[Case | BrokenCase]:
    """The file's entries, from the parsed cache when this exact text loaded cleanly before."""
    try:
        data = path.read_bytes()
    except OSError:
        data = None
    key = validation_cache.parsed_key(data, relative, profile, clauses) if data is not None else None
    if key is not None:
        cached = validation_cache.load_parsed(key)
        if cached is not None:
            return cached
    entries = list(_parse_file(path, relative, clauses, profile))
    if key is not None and all(isinstance(entry, Case) for entry in entries):  # failures are never cached
        validation_cache.store_parsed(key, entries)
    return entries


def _parse_file(path: Path, relative: str, clauses: Mapping[str, Clause], profile: str = DEFAULT_PROFILE) -> Iterator[Case | BrokenCase]:
    import yaml

    from conformance import broken_yaml, yamlsafe

    stem_id = f"{path.stem}::file"
    try:
        text = path.read_text(encoding="utf-8")
        # Bounded: a billion-laughs or 1000-level file is one problem, not a hang or a RecursionError.
        node = yamlsafe.compose(text)
        lines = _Lines(node)
        # Built from the composed node, so the text is parsed once for both data and lines.
        data = yaml.constructor.SafeConstructor().construct_document(node) if node is not None else None
    except UnicodeDecodeError as error:
        if profile == DEFAULT_PROFILE:  # a file that cannot be read states no profile: reported once
            problem = f"cannot read the file: it is not UTF-8 text ({error.reason} at byte {error.start})"
            yield BrokenCase(stem_id, relative, 1, (problem,))
        return
    except OSError as error:
        if profile == DEFAULT_PROFILE:
            yield BrokenCase(stem_id, relative, 1, (f"cannot read the file: {error}",))
        return
    except yamlsafe.YamlLimitError as error:
        yield BrokenCase(stem_id, relative, 1, (f"refused: the YAML is {error}",))
        return
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        if profile == DEFAULT_PROFILE:  # reported once, by the default profile's load
            problem = _yaml_problem(error, text)
            # Its cases still count: each id found in the text is reported broken, in its lab.
            chapter, entries = broken_yaml.textual_cases(text)
            if not entries:
                yield BrokenCase(stem_id, relative, line, (problem,), problem_lines=(line,))
            for entry in entries:
                message = f"{problem} (at line {line}; the whole file is unusable)"
                # A shared file names its chapter inside `course: {...}`; a lab names its chapter too.
                entry_chapter = chapter or (f"0{entry.lab[0]}" if entry.lab else None)
                yield BrokenCase(entry.id, relative, entry.line, (message,), entry.lab, entry_chapter, problem_lines=(line,))
        return

    selected = _select_profile(data, lines, relative, stem_id, profile)
    if not isinstance(selected, tuple):
        if selected is not None:
            yield selected
        return
    # A shared file is checked as this profile's view of it; problems point into the shared text.
    checked, to_original, envelope_problems = selected
    from conformance import schema_errors
    from conformance.schemas import validator

    schema_name = get_profile(profile).fixture_schema
    non_json = list(_non_json_values(data, []))
    file_problems: list[tuple[str, int]] = []
    case_problems: dict[int, list[tuple[str, int]]] = {}
    for where, message in [*non_json, *envelope_problems]:
        _attribute(where, message, lines, file_problems, case_problems)
    suffix = f" (profile {profile})" if checked is not data else ""
    cache_text = f"{profile}\0{text}" if suffix else text
    validated_before = not non_json and not envelope_problems and validation_cache.known_valid(cache_text)
    if not validated_before:
        # if/then branches report one mistake several times: keep the best error per path.
        by_path: dict[tuple[str | int, ...], list[ValidationError]] = {}
        # Values the loader checks itself, in words that name their type (a model event, an upstream type).
        own_paths = [tuple(where) for where in _own_check_paths(checked, profile)]
        for schema_error in validator(schema_name).iter_errors(checked):
            at = tuple(schema_error.absolute_path)
            if not any(at[: len(own)] == own for own in own_paths):
                by_path.setdefault(tuple(to_original(at)), []).append(schema_error)
        # A non-JSON value is already reported in plainer words; the schema's complaints on the
        # same branch of the same case (the value, or a parent that no longer matches) follow from it.
        # So is a mistake in a shared case's shared form: its view is checked once that is right.
        earlier_paths = [tuple(where) for where, _ in non_json] + [tuple(where[:2]) for where, _ in envelope_problems]
        # A file-level key the shared form already refused (a misspelt `topic`) is said once, not once more per view.
        envelope_keys = [tuple(where) for where, _ in envelope_problems if where and where[0] != "cases"]
        for error_path, errors in by_path.items():
            if errors and not any(_same_branch(error_path, path) for path in earlier_paths):
                reason_path, reason = schema_errors.describe_best(errors)
                at = tuple(to_original(reason_path))
                if not any(at[: len(key)] == key for key in envelope_keys):
                    _attribute(list(at), reason + suffix, lines, file_problems, case_problems)
    if not isinstance(checked, dict) or not isinstance(checked.get("cases"), list) or not checked["cases"]:
        found = file_problems or [("the file has no list of cases", 1)]
        yield BrokenCase(stem_id, relative, 1, tuple(m for m, _ in found), problem_lines=tuple(n for _, n in found))
        return
    if file_problems:
        # A file-level mistake (a misspelt `topic`) errors every case, each still counted in its
        # lab and selectable by id, as a YAML error does.
        whole = [(f"{message} (a problem of the file: none of its cases can run)", number) for message, number in file_problems]
        for index, raw in enumerate(checked["cases"]):
            owned = case_problems.get(index, []) + whole
            identifier = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else None
            yield BrokenCase(
                identifier or f"{path.stem}::case-{index}",
                relative,
                lines.line(to_original(["cases", index])),
                tuple(m for m, _ in owned),
                _lab_of(raw, profile),
                str(checked.get("chapter", "")),
                profile,
                tuple(n for _, n in owned),
            )
        return
    # Remembered as valid only once the loader's own shape checks passed too (below): a file
    # remembered after the schemas alone would skip those checks on every later load.
    remember = not non_json and not case_problems and not validated_before
    data = checked

    chapter = str(data.get("chapter", ""))
    for index, raw in enumerate(data["cases"]):
        case_path: list[str | int] = ["cases", index]
        line = lines.line(case_path)
        problems = case_problems.get(index, [])
        case_id = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else None
        if not problems and isinstance(raw, dict):
            problems = [
                # Said at its path in the file: a shared case's pi-ai-1 input is under `pi-ai-1:`.
                (_with_path(to_original([*case_path, *inner])[2:], message), lines.line(to_original([*case_path, *inner])))
                for inner, message in _semantic_problems(raw, clauses, check_shapes=not validated_before, profile=profile)
            ]
        remember = remember and not problems
        if problems or not isinstance(raw, dict):
            found = problems or [("the case is not a mapping", line)]
            yield BrokenCase(
                case_id or f"{path.stem}::case-{index}",
                relative,
                line,
                tuple(m for m, _ in found),
                _lab_of(raw, profile),
                chapter,
                profile,
                tuple(n for _, n in found),
            )
            continue
        steps = raw.get("steps") or []
        yield Case(
            id=raw["id"],
            file=relative,
            line=line,
            chapter=chapter,
            lab=_lab_of(raw, profile) or "",
            clauses=tuple(raw["clauses"]),
            description=raw["description"],
            operation=raw["operation"],
            input=raw["input"],
            expect=raw.get("expect"),
            steps=tuple(steps),
            hint=tuple(raw.get("hint") or ()),
            timeout_s=raw.get("timeout_s"),
            features=_features_of(raw, profile),
            step_lines=tuple(lines.line([*case_path, "steps", i]) for i in range(len(steps))),
            profile=profile,
        )
    if remember:
        validation_cache.remember_valid(cache_text)


def _features_of(raw: JsonObject, profile: str) -> tuple[str, ...]:
    """The case's features; a pi-ai-1 case also gets the upstream function it calls (conformance.function_features)."""
    features = tuple(str(name) for name in raw.get("features") or ())  # type: ignore[union-attr]
    if profile == PI_AI_1.name:
        function = function_feature(str(raw.get("operation")), raw.get("input"))
        if function is not None and function not in features:
            features = (*features, function)
    return features


#: What a profile checks of a file: the data its schema sees, how a path in it maps back into the
#: file, and the problems of a shared file's shared form (path, message).
_Selected = tuple[object, Callable[[Sequence[str | int]], list[str | int]], list[tuple[list[str | int], str]]]


def _select_profile(data: object, lines: _Lines, relative: str, stem_id: str, profile: str) -> _Selected | BrokenCase | None:
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
    from conformance import schema_errors
    from conformance.schemas import validator

    by_path: dict[tuple[str | int, ...], list[ValidationError]] = {}
    for schema_error in validator(shared_files.SCHEMA).iter_errors(data):
        # The schema describes a case's input, expectations and steps for editors; each profile's
        # view checks them (and says which profile objects), so they are not said twice here.
        if not shared_files.checked_by_views(list(schema_error.absolute_path)):
            by_path.setdefault(tuple(schema_error.absolute_path), []).append(schema_error)
    found = [(list(where), reason) for where, reason in (schema_errors.describe_best(errors) for errors in by_path.values())]
    cases = data.get("cases")
    for index, case in enumerate(cases if isinstance(cases, list) else []):
        if isinstance(case, dict):
            found.extend((["cases", index, *where], message) for where, message in shared_files.clause_problems(case, names))
    return found


def _lab_of(raw: object, profile: str) -> str | None:
    """The course's lab; for another profile, the case's first feature (its area), which reports group by."""
    if not isinstance(raw, dict):
        return None
    if profile != DEFAULT_PROFILE:
        features = raw.get("features")
        return str(features[0]) if isinstance(features, list) and features else None
    return raw.get("lab") if raw.get("lab") in LABS else None


def _attribute(
    where: Sequence[str | int],
    message: str,
    lines: _Lines,
    file_problems: list[tuple[str, int]],
    case_problems: dict[int, list[tuple[str, int]]],
) -> None:
    """File a problem under the case it belongs to, with its path inside that case and its own line."""
    line = lines.line(where)
    if len(where) >= 2 and where[0] == "cases" and isinstance(where[1], int):
        case_problems.setdefault(where[1], []).append((_with_path(where[2:], message), line))
    else:
        file_problems.append((_with_path(where, message), line))


def _with_path(where: Iterable[str | int], message: str) -> str:
    inner = _format_path(where)
    return f"{inner}: {message}" if inner else message


def _yaml_problem(error: yaml.YAMLError, text: str) -> str:
    """A YAML error in one line; a duplicate anchor (a copied case) says how to fix it."""
    problem = f"not valid YAML: {_one_line(str(error))}"
    mark = getattr(error, "problem_mark", None)
    first = getattr(error, "context_mark", None)
    if "found duplicate anchor" in str(error) and mark is not None and first is not None:
        line_text = text.split("\n")[mark.line] if mark.line < len(text.split("\n")) else ""
        found = re.match(r"&([^\s,\[\]{}]+)", line_text[mark.column :])
        name = found[1] if found else "…"
        problem = (
            f"not valid YAML: duplicate anchor &{name} (first defined at line {first.line + 1}); anchors are per file, "
            f"so a copied case needs its own: rename &{name} and its *{name} aliases in the copy"
        )
    return problem


def _own_check_paths(data: object, profile: str) -> Iterator[list[str | int]]:
    """Where the schema describes a value (for editors) that :func:`_semantic_problems` checks in plainer words.

    The course's pushed model events (ir.schema.json), and for pi-ai-1 every upstream input
    (:func:`conformance.pi_ai_shapes.input_paths`): a schema error there is left to that check,
    which runs once the case has no other problem.
    """
    cases = data.get("cases") if isinstance(data, dict) else None
    for index, raw in enumerate(cases if isinstance(cases, list) else []):
        if not isinstance(raw, dict):
            continue
        if profile == PI_AI_1.name:
            for where in pi_ai_shapes.input_paths(raw):
                yield ["cases", index, *where]
        elif profile == DEFAULT_PROFILE and raw.get("operation") == "event_stream" and _assistant_kind(raw):
            steps = raw.get("steps")
            for position, step in enumerate(steps if isinstance(steps, list) else []):
                if isinstance(step, dict) and step.get("action") == "push":
                    yield ["cases", index, "steps", position, "event"]


def _assistant_kind(raw: JsonObject) -> bool:
    input_value = raw.get("input")
    return isinstance(input_value, dict) and input_value.get("kind") == "assistant"


def _same_branch(first: tuple[str | int, ...], second: tuple[str | int, ...]) -> bool:
    """Both paths lie inside one case and one of them contains the other."""
    shorter = min(len(first), len(second))
    return shorter >= 2 and first[0] == "cases" and first[:shorter] == second[:shorter]


def _format_path(parts: Iterable[str | int]) -> str:
    path = ""
    for part in parts:
        path = join_index(path, part) if isinstance(part, int) else join_key(path, part)
    return path


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _non_json_values(value: object, where: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    """Values YAML can produce that JSON cannot carry (dates, non-string keys, NaN)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield where, f"key {key!r} is not a string (quote it)"
            else:
                yield from _non_json_values(item, [*where, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_json_values(item, [*where, index])
    elif isinstance(value, float) and not math.isfinite(value):
        yield where, f"{value} is not a JSON number"
    elif value is not None and not isinstance(value, bool | int | float | str):
        yield where, f"{value!r} is a YAML {type(value).__name__}, not a JSON value (quote it)"


_Found = list[tuple[list[str | int], str]]


def _semantic_problems(raw: JsonObject, clauses: Mapping[str, Clause], check_shapes: bool, profile: str = DEFAULT_PROFILE) -> _Found:
    """Checks a schema cannot express: clause registry, event shapes, scenario consistency.

    ``check_shapes`` is False for a file that passed these same schemas before (the shape
    checks depend only on the file and the schemas; the clause registry can change).
    """
    from conformance import schema_errors

    spec = get_profile(profile).spec
    problems: _Found = [
        (["clauses", index], f"unknown clause id {clause!r} (not in {spec})")
        for index, clause in enumerate(raw.get("clauses", []))  # type: ignore[arg-type]
        if isinstance(clause, str) and clause not in clauses
    ]
    operation = raw.get("operation")
    if operation not in get_profile(profile).operations:
        return problems
    if check_shapes and profile == DEFAULT_PROFILE:  # the course IR's shapes; another profile has its own
        problems.extend((list(where), message) for where, message in schema_errors.expectation_problems(raw))
    if check_shapes and profile == PI_AI_1.name:  # upstream's types: a strict port can take every input
        problems.extend((list(where), message) for where, message in pi_ai_shapes.input_problems(raw))
        problems.extend((list(where), message) for where, message in pi_ai_shapes.expectation_problems(raw))
    if operation in get_profile(profile).scenario_operations:
        # The course's event shapes (ir.schema.json) do not apply to another profile's events.
        problems.extend(_scenario_problems(raw, check_shapes and profile == DEFAULT_PROFILE))
    return problems


def _scenario_problems(raw: JsonObject, check_shapes: bool) -> _Found:
    from conformance import schema_errors
    from conformance.schemas import validator

    problems: _Found = []
    steps = raw.get("steps")
    if not isinstance(steps, list) or not steps:
        return [(["steps"], "a scenario needs at least one step")]
    input_value = raw.get("input")
    assistant_kind = check_shapes and isinstance(input_value, dict) and input_value.get("kind") == "assistant"
    event_validator = validator("ir.schema.json", "/$defs/ModelEvent")
    streamed: set[str] = set()
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        action = step.get("action")
        if raw.get("operation") == "event_stream" and action == "push" and assistant_kind:
            errors = list(event_validator.iter_errors(step.get("event")))
            if errors:
                inner, reason = schema_errors.describe_best(errors)
                problems.append((["steps", index, "event", *inner], f"not a model event: {reason}"))
        call = step.get("call")
        if action == "stream" and isinstance(call, str):
            if call in streamed:
                problems.append((["steps", index, "call"], f"call {call!r} is already streamed; use a new name"))
            streamed.add(call)
        elif isinstance(call, str) and call not in streamed:
            problems.append((["steps", index, "call"], f"call {call!r} is used before a stream step creates it"))
    return problems
