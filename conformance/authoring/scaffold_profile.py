"""``fixtures new --profile NAME[,NAME...]``: a scaffold case of another profile, or of several.

A profile other than the course has areas (``features``) instead of labs, and its own clause
document and schema. A case of several profiles is written once, in a shared file
(``profile: [course, pi-ai-1]``, spec/fixture-format.md, Shared cases), with each profile's
own keys in the mapping named after it. The case goes into the one file of exactly these
profiles holding the operation (or the file ``--file`` names, created with the right schema
header and ``profile:`` line), with an id prefix read from that file's ids and ``TODO:``
placeholders that ``fixtures lint`` reports until they are filled in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.authoring.files import FixtureText, read
from conformance.authoring.ids import shared_words
from conformance.authoring.scaffold import (
    Scaffolded,
    ScaffoldError,
    append_lines,
    check_operation,
    choose_id,
    named_file,
    new_file,
)
from conformance.authoring.scaffold_bodies import BODIES, EXAMPLE_CLAUSE
from conformance.loading import shared_files
from conformance.loading.loader import fixture_files
from conformance.model.profiles import COURSE, PROFILES, Profile, get_profile

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
# The faux provider's skeleton, as the course's scripted_model one: one call streamed, then consumed.
_PROFILE_BODIES = {
    "faux_provider": """\
input:
  options:
    api: faux-test
    # min equal to max (spec/pi-ai-1/spec.md section 4): every chunk has the same size, so the deltas are deterministic.
    tokenSize: {min: 4, max: 4}
  responses:
    - message: "TODO: the assistant message to play, e.g. {role: assistant, content: [{type: text, text: hi}], api: faux-test, \\
        provider: faux, model: faux-1, usage: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, \\
        cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0}}, stopReason: stop, timestamp: 10}"
steps:
  - action: stream
    call: c1
    context: {messages: [{role: user, content: "TODO: the request", timestamp: 1}]}
    expect: {threw: null}
  # Expected values come from the clauses above and upstream's source, never from what an implementation prints.
  - action: consume
    call: c1
    expect:
      finished: true
      events:
        - "TODO: every event of the call, in order"
""",
}
_GENERIC_SCENARIO = """\
input: "TODO: the operation's input (spec/{spec}, section 5)"
steps:
  - "TODO: the steps; each may carry the expect the clauses prescribe"
"""


def scaffold_profile_case(
    root: Path,
    profile_names: Sequence[str],
    operation: str | Sequence[str],
    lab: str | None = None,
    case_id: str | None = None,
    slug: str | None = None,
    file: str | None = None,
) -> Scaffolded:
    """Append a scaffold case of ``operation`` for ``profile_names`` (not the course alone) and return where it went.

    ``operation`` is one operation every profile has, or one per profile (in ``profile_names``
    order) for a shared case whose profiles' operations differ: each block then names its own.
    """
    profiles = [get_profile(name) for name in dict.fromkeys(profile_names)]
    names = [profile.name for profile in profiles]
    if names == [COURSE.name]:
        raise ScaffoldError("a course case is scaffolded without --profile")
    per_profile = _operations(names, operation)
    operation = per_profile[names[0]]
    _check_lab(names, per_profile.get(COURSE.name, operation), lab)
    lacking = [profile.name for profile in profiles if per_profile[profile.name] not in profile.operations]
    if lacking:
        common = sorted(set.intersection(*(set(profile.operations) for profile in profiles)))
        wanted = per_profile[lacking[0]]
        raise ScaffoldError(
            f"profile {', '.join(lacking)} has no operation {wanted!r}; one of: {', '.join(common) or 'none in common'}"
            + ("" if len(set(per_profile.values())) > 1 else "; or one --operation per profile, in --profile order")
        )
    texts = [read(path, root) for path in fixture_files(root)]
    taken = {str(raw["id"]) for fixture in texts for _, raw in fixture.cases if isinstance(raw.get("id"), str)}
    own = [fixture for fixture in texts if set(shared_files.profiles_of(fixture.data)) == set(names)]
    target = _target(root, own, operation, file, names)
    existing = next((fixture for fixture in texts if fixture.path.resolve() == target.resolve()), None)
    if existing is not None and existing.document is None:
        raise ScaffoldError(f"{existing.display} is not valid YAML; fix it first (pi-conformance fixtures lint)")
    if existing is not None and existing not in own:
        raise ScaffoldError(f"{existing.display} is not a file of profile {', '.join(names)} (see its `profile:` line)")
    chosen = choose_id(case_id, slug, _prefix(existing, own, operation, profiles), taken)
    lines = _lines(chosen, per_profile, lab, profiles, _areas(texts, per_profile))
    if existing is not None:
        return append_lines(existing, chosen, lines)
    if len(profiles) == 1:
        return new_file(target, chosen, [f"profile: {names[0]}"], lines, profiles[0].fixture_schema)
    file_keys = [f"profile: [{', '.join(names)}]"]
    if lab is not None:
        file_keys.append(f'{COURSE.name}: {{chapter: "0{lab[0]}"}}')
    return new_file(target, chosen, file_keys, lines, shared_files.SCHEMA)


def _operations(names: list[str], operation: str | Sequence[str]) -> dict[str, str]:
    """Each profile's operation: the one given for all, or one per profile in order."""
    given = [operation] if isinstance(operation, str) else list(operation)
    if len(given) == 1:
        return dict.fromkeys(names, given[0])
    if len(given) != len(names):
        raise ScaffoldError(f"--operation: one for every profile, or one per profile ({', '.join(names)}); got {len(given)}")
    return dict(zip(names, given, strict=True))


def operations_of(raw: Mapping[str, object]) -> set[str]:
    """The operations a case names: shared, or in its profiles' blocks (an agent case shared by course and pi-agent-core-1)."""
    found = {str(raw["operation"])} if "operation" in raw else set()
    for name in PROFILES:
        block = raw.get(name)
        if isinstance(block, Mapping) and "operation" in block:
            found.add(str(block["operation"]))
    return found


def _check_lab(names: list[str], operation: str, lab: str | None) -> None:
    """The course needs its lab; no other profile has labs."""
    if COURSE.name not in names:
        if lab is not None:
            raise ScaffoldError(f"--lab is the course's; a {', '.join(names)} case gets its area from the operation")
        return
    if lab is None:
        raise ScaffoldError("--lab is required for a case of the course profile")
    if operation in COURSE.operations:
        check_operation(operation, lab)


def _target(root: Path, own: list[FixtureText], operation: str, file: str | None, names: list[str]) -> Path:
    if file is not None:
        return named_file(root, file)
    holding = [fixture for fixture in own if any(operation in operations_of(raw) for _, raw in fixture.cases)]
    if len(holding) == 1:
        return holding[0].path
    listed = ", ".join(names)
    folder = "shared" if len(names) > 1 else names[0]
    if not holding:
        raise ScaffoldError(f"no file of profile {listed} has {operation} cases; name one with --file (e.g. {folder}/topic.yaml)")
    listing = "\n  ".join(f"{fixture.display}  ({_topic(fixture)})" for fixture in holding)
    raise ScaffoldError(f"several files of profile {listed} hold {operation} cases; choose one with --file:\n  {listing}")


def _topic(fixture: FixtureText) -> str:
    """The file's ``topic:``, to choose a file by what it is about."""
    topic = fixture.data.get("topic") if isinstance(fixture.data, dict) else None
    return str(topic) if topic else "no topic"


def _prefix(fixture: FixtureText | None, own: list[FixtureText], operation: str, profiles: list[Profile]) -> str:
    """The words the ids of this operation share in the file (else in these profiles' files), e.g. ``pa-replay-``."""
    for files in ([fixture] if fixture else [], own):
        ids = [
            str(raw["id"])
            for other in files
            for _, raw in other.cases
            if operation in operations_of(raw) and isinstance(raw.get("id"), str)
        ]
        shared = shared_words(ids)
        if shared:
            return "-".join(shared) + "-"
    return ("" if COURSE in profiles else "pa-") + operation.replace("_", "-") + "-"


def _areas(texts: list[FixtureText], operations: Mapping[str, str]) -> dict[str, str]:
    """Per profile, the area its cases of its operation list first (the one reports group them by)."""
    found: dict[str, str] = {}
    for fixture in texts:
        names = shared_files.profiles_of(fixture.data)
        for _, raw in fixture.cases:
            for name in names:
                block = raw.get(name) if len(names) > 1 else raw
                named = block.get("operation", raw.get("operation")) if isinstance(block, dict) else raw.get("operation")
                if named != operations.get(name):
                    continue
                features = block.get("features") if isinstance(block, dict) else None
                if name != COURSE.name and isinstance(features, list) and features:
                    found.setdefault(name, str(features[0]))
    return found


def _lines(case_id: str, operations: Mapping[str, str], lab: str | None, profiles: list[Profile], areas: dict[str, str]) -> list[str]:
    """The case's keys, one per line, unindented: one profile's form, or the shared form.

    Where the profiles' operations differ, each profile's block holds its operation and its
    placeholders, and the case names no shared operation.
    """
    shared = len(profiles) > 1
    split = len(set(operations.values())) > 1
    operation = operations[profiles[0].name]
    # One placeholder per profile: a shared case cites at least one clause of each.
    placeholders = [
        f"TODO: the {profile.spec} clause ids this case checks, e.g. "
        + (EXAMPLE_CLAUSE.get(operation, "") if profile is COURSE else profile.clause_prefixes[0] + "...")
        for profile in profiles
    ]
    lines = [f"id: {case_id}", "clauses: [" + ", ".join(f'"{text}"' for text in placeholders) + "]"]
    for profile in profiles:
        own = operations[profile.name]
        keys = [f'lab: "{lab}"'] if profile is COURSE else [f"features: [{areas.get(profile.name, _AREA_OF.get(own, 'TODO-area'))}]"]
        if split:
            keys += [f"operation: {own}", *_body(own, profile).splitlines()]
        lines += [f"{profile.name}:", *("  " + key for key in keys)] if shared else keys
    description = 'description: "TODO: one line, why this case exists (the bug or trap it catches)"'
    if split:
        return [*lines, description]
    return [*lines, description, f"operation: {operation}", *_body(operation, profiles[0]).splitlines()]


def _body(operation: str, profile: Profile) -> str:
    """The placeholder input and expectations of ``operation`` (an operation the course has too gets the course's)."""
    generic = _GENERIC_SCENARIO if operation in profile.scenario_operations else _GENERIC_PURE
    return _PROFILE_BODIES.get(operation) or BODIES.get(operation) or generic.format(spec=profile.spec.removeprefix("spec/"))
