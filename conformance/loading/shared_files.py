"""Fixture files shared by several profiles: one case, and each profile's view of it.

A shared file states a list of profiles (``profile: [course, pi-ai-1]``). Its cases hold
what the profiles agree on (operation, input, expectations, description) once; ``clauses``
cites every profile's clauses, told apart by their prefixes; and what belongs to one
profile only (the course's ``lab`` and ``features``, pi-ai-1's ``features``, the course's
``chapter`` at file level) goes under a key named after that profile. Where the profiles'
operations differ (the agent tier), each profile's block names its own ``operation``,
``input`` and ``expect``, and the case shares its id, description, clauses and scenario. The envelope is
checked against ``shared-fixture-file.schema.json``; then each profile loads its *view*
(:func:`view_of`): the file as that profile's own schema expects it, with only its
clauses, checked against that schema. A problem found in a view is reported at its path
in the shared file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from conformance.common.jsontypes import JsonObject, JsonValue
from conformance.model.profiles import DEFAULT_PROFILE, PROFILES, Profile

SCHEMA: Final = "shared-fixture-file.schema.json"

Path = list[str | int]


def is_shared(data: object) -> bool:
    """True when the file states a list of profiles."""
    return isinstance(data, dict) and isinstance(data.get("profile"), list)


def profiles_of(data: object) -> tuple[str, ...]:
    """The profiles a parsed fixture file belongs to (a plain file: its one profile, default course)."""
    if not isinstance(data, dict):
        return (DEFAULT_PROFILE,)
    stated = data.get("profile", DEFAULT_PROFILE)
    if isinstance(stated, list):
        return tuple(str(name) for name in stated)
    return (str(stated),)


def profile_of_clause(clause: str, names: Sequence[str]) -> str | None:
    """The profile among ``names`` whose clause prefixes ``clause`` starts with."""
    for name in names:
        profile = PROFILES.get(name)
        if profile is not None and clause.startswith(profile.clause_prefixes):
            return name
    return None


@dataclass
class View:
    """A shared file as one profile's schema expects it, and where each of its values came from."""

    data: JsonObject
    # Per case index: key in the view -> its path in the shared case (for keys moved out of a profile's block).
    moved_keys: dict[int, dict[str, Path]] = field(default_factory=dict)
    # Per case index: index in the view's clauses -> index in the shared case's clauses.
    clause_indexes: dict[int, list[int]] = field(default_factory=dict)
    # File-level keys moved out of the profile's block.
    moved_file_keys: dict[str, Path] = field(default_factory=dict)

    def original_path(self, path: Sequence[str | int]) -> Path:
        """The path in the shared file of the value at ``path`` in the view."""
        parts = list(path)
        if len(parts) >= 3 and parts[0] == "cases" and isinstance(parts[1], int):
            index, key, rest = parts[1], parts[2], parts[3:]
            if isinstance(key, str) and key in self.moved_keys.get(index, {}):
                return ["cases", index, *self.moved_keys[index][key], *rest]
            clause_map = self.clause_indexes.get(index, [])
            if key == "clauses" and rest and isinstance(rest[0], int) and rest[0] < len(clause_map):
                return ["cases", index, "clauses", clause_map[rest[0]], *rest[1:]]
            return parts
        if parts and isinstance(parts[0], str) and parts[0] in self.moved_file_keys:
            return [*self.moved_file_keys[parts[0]], *parts[1:]]
        return parts


def view_of(data: JsonObject, profile: Profile) -> View:
    """The view of the shared file ``data`` that ``profile`` loads: its own keys, its clauses only."""
    view = View({})
    for key, value in data.items():
        if key == "profile" or key in PROFILES:
            continue
        if key == "cases" and isinstance(value, list):
            view.data["cases"] = [_case_view(view, index, case, profile) for index, case in enumerate(value)]
        else:
            view.data[key] = value
    block = data.get(profile.name)
    if isinstance(block, dict):
        for key, value in block.items():
            view.data[key] = value
            view.moved_file_keys[key] = [profile.name, key]
    if profile.name != DEFAULT_PROFILE:  # every other profile's files state their profile
        view.data["profile"] = profile.name
    return view


def _case_view(view: View, index: int, case: JsonValue, profile: Profile) -> JsonValue:
    if not isinstance(case, dict):
        return case
    projected: JsonObject = {}
    for key, value in case.items():
        if key in PROFILES:
            continue
        if key == "clauses" and isinstance(value, list):
            kept = [at for at, clause in enumerate(value) if isinstance(clause, str) and clause.startswith(profile.clause_prefixes)]
            projected["clauses"] = [value[position] for position in kept]
            view.clause_indexes[index] = kept
        else:
            projected[key] = value
    block = case.get(profile.name)
    if isinstance(block, dict):
        for key, value in block.items():
            projected[key] = value
            view.moved_keys.setdefault(index, {})[key] = [profile.name, key]
    return projected


# A case's scenario: the shared keys every profile's view holds, and those a profile's block may replace.
_SCENARIO_KEYS: Final = ("input", "expect", "steps")


def checked_by_views(path: Sequence[str | int]) -> bool:
    """True for a path into a case's input, expectations or steps (shared or a profile's own), which each view checks."""
    if len(path) < 3 or path[0] != "cases":
        return False
    key = path[2]
    if key in _SCENARIO_KEYS:
        return True
    return isinstance(key, str) and key in PROFILES and len(path) > 3 and path[3] in _SCENARIO_KEYS


def operation_problems(case: JsonObject, names: Sequence[str]) -> list[tuple[Path, str]]:
    """A shared case names its operation once: shared, or in the block of every one of its profiles (path in the case, message)."""
    blocks = {name: case.get(name) for name in names}
    own = [name for name, block in blocks.items() if isinstance(block, dict) and "operation" in block]
    if "operation" in case:
        return [([name, "operation"], "the case names a shared operation; a profile's block cannot name another") for name in own]
    missing = [name for name in names if name not in own]
    if own and missing:
        # Without a shared operation each view needs its own; the first missing one is the problem.
        return [([], f"no shared operation, and the block of {missing[0]} names none: name one in each profile's block")]
    return []


def clause_problems(case: JsonObject, names: Sequence[str]) -> list[tuple[Path, str]]:
    """A shared case cites at least one clause of each of its profiles, and no clause of another (path in the case, message)."""
    clauses = case.get("clauses")
    if not isinstance(clauses, list):
        return []
    problems: list[tuple[Path, str]] = []
    cited: set[str] = set()
    for position, clause in enumerate(clauses):
        if not isinstance(clause, str):
            continue
        owner = profile_of_clause(clause, names)
        if owner is None:
            problems.append((["clauses", position], f"{clause!r} is a clause of none of this file's profiles ({', '.join(names)})"))
        else:
            cited.add(owner)
    # An id of no profile may be the missing profile's (a typo, a placeholder): that is the problem to report.
    unplaced = any(clause_problem[0] != ["clauses"] for clause_problem in problems)
    for name in names:
        if name not in cited and name in PROFILES and not unplaced:
            prefixes = "/".join(PROFILES[name].clause_prefixes)
            problems.append((["clauses"], f"a shared case cites at least one clause of each of its profiles; none of {name} ({prefixes})"))
    return problems


def case_problems(case: JsonObject, names: Sequence[str]) -> list[tuple[Path, str]]:
    """A shared case's own problems, beside its schema: the clauses it cites and where it names its operation."""
    return clause_problems(case, names) + operation_problems(case, names)
