"""``fixtures new --profile NAME``: a scaffold case for a profile other than the course.

Such a profile has areas (``features``) instead of labs and its own clause document and
schema. The case goes into the one file of that profile holding the operation (or the file
``--file`` names, created with the profile's schema header and ``profile:`` line), with an
id prefix read from that file's ids, and ``TODO:`` placeholders that ``fixtures lint``
reports until they are filled in.
"""

from __future__ import annotations

from pathlib import Path

from conformance.authoring.files import FixtureText, read
from conformance.authoring.scaffold import _BODIES, Scaffolded, ScaffoldError, _choose_id, _shared_words, append_lines, new_file
from conformance.loader import fixture_files
from conformance.profiles import DEFAULT_PROFILE, Profile, get_profile

# The area an operation's cases belong to when no file of the profile shows it yet.
_AREA_OF = {
    "content_text": "messages",
    "system_message_text": "messages",
    "render_system_message_update": "messages",
    "faux_block": "messages",
    "faux_message": "messages",
    "current_system_message": "system-replay",
    "current_system_prompt": "system-replay",
    "current_tools": "system-replay",
    "normalize_context": "system-replay",
    "event_stream": "event-streams",
    "faux_provider": "faux-provider",
}
_GENERIC_PURE = """\
input: "TODO: the operation's input (spec/{spec}, section 5)"
# Expected values come from the clauses above and upstream's source, never from what an implementation prints.
expect:
  value: "TODO: what the clauses prescribe"
"""
_GENERIC_SCENARIO = """\
input: "TODO: the operation's input (spec/{spec}, section 5)"
steps:
  - "TODO: the steps; each may carry the expect the clauses prescribe"
"""


def scaffold_profile_case(
    root: Path, profile_name: str, operation: str, case_id: str | None = None, slug: str | None = None, file: str | None = None
) -> Scaffolded:
    """Append a scaffold case of ``operation`` to a file of ``profile_name`` (not the course) and return where it went."""
    profile = get_profile(profile_name)
    if profile.name == DEFAULT_PROFILE:
        raise ScaffoldError("the course profile's cases are scaffolded with --lab")
    if operation not in profile.operations:
        raise ScaffoldError(f"profile {profile.name} has no operation {operation!r}; one of: {', '.join(sorted(profile.operations))}")
    texts = [read(path, root) for path in fixture_files(root)]
    taken = {str(raw["id"]) for fixture in texts for _, raw in fixture.cases if isinstance(raw.get("id"), str)}
    own = [fixture for fixture in texts if isinstance(fixture.data, dict) and fixture.data.get("profile") == profile.name]
    target = _target(root, own, operation, file, profile)
    existing = next((fixture for fixture in texts if fixture.path.resolve() == target.resolve()), None)
    if existing is not None and existing.document is None:
        raise ScaffoldError(f"{existing.display} is not valid YAML; fix it first (pi-conformance fixtures lint)")
    if existing is not None and existing not in own:
        raise ScaffoldError(f"{existing.display} is not a file of profile {profile.name} (no `profile: {profile.name}` line)")
    chosen = _choose_id(case_id, slug, _prefix(existing, own, operation), taken)
    lines = _lines(chosen, operation, _area(own, operation), profile)
    if existing is None:
        return new_file(target, chosen, [f"profile: {profile.name}"], lines, profile.fixture_schema)
    return append_lines(existing, chosen, lines)


def _target(root: Path, own: list[FixtureText], operation: str, file: str | None, profile: Profile) -> Path:
    if file is not None:
        named = Path(file)
        path = named if named.is_absolute() or named.exists() else root / named
        if path.suffix not in (".yaml", ".yml"):
            raise ScaffoldError(f"{file}: a fixture file ends in .yaml")
        return path
    holding = [fixture for fixture in own if any(raw.get("operation") == operation for _, raw in fixture.cases)]
    if len(holding) == 1:
        return holding[0].path
    if not holding:
        raise ScaffoldError(f"no {profile.name} file has {operation} cases; name one with --file (e.g. {profile.name}/topic.yaml)")
    listing = "\n  ".join(fixture.display for fixture in holding)
    raise ScaffoldError(f"several {profile.name} files hold {operation} cases; choose one with --file:\n  {listing}")


def _prefix(fixture: FixtureText | None, own: list[FixtureText], operation: str) -> str:
    """The words the ids of this operation share in the file (else in the profile), e.g. ``pa-replay-``."""
    for files in ([fixture] if fixture else [], own):
        ids = [
            str(raw["id"])
            for other in files
            for _, raw in other.cases
            if raw.get("operation") == operation and isinstance(raw.get("id"), str)
        ]
        shared = _shared_words(ids)
        if shared:
            return "-".join(shared) + "-"
    return "pa-" + operation.replace("_", "-") + "-"


def _area(own: list[FixtureText], operation: str) -> str:
    """The area the profile's cases of this operation list first (the one reports group them by)."""
    for fixture in own:
        for _, raw in fixture.cases:
            features = raw.get("features")
            if raw.get("operation") == operation and isinstance(features, list) and features:
                return str(features[0])
    return _AREA_OF.get(operation, "TODO-area")


def _lines(case_id: str, operation: str, area: str, profile: Profile) -> list[str]:
    prefix = profile.clause_prefixes[0]
    generic = _GENERIC_SCENARIO if operation in profile.scenario_operations else _GENERIC_PURE
    # An operation the course has too (same input and observation) gets the course's placeholders.
    body = _BODIES.get(operation) or generic.format(spec=profile.spec.removeprefix("spec/"))
    return [
        f"id: {case_id}",
        f"features: [{area}]",
        f'clauses: ["TODO: the {profile.spec} clause ids this case checks ({prefix}...)"]',
        'description: "TODO: one line, why this case exists (the bug or trap it catches)"',
        f"operation: {operation}",
        *body.splitlines(),
    ]
