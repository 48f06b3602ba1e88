"""The registry of fixture *features*: behaviours beyond the chapter text (``spec/features.yaml``).

A case lists the features it depends on (``features: [js-number-text]``); each feature names
where the behaviour comes from (``course-code``, ``course-tests``, ``js-semantics``,
``chapter-02``) and the clauses that state it. The spec marks those clauses with
``[beyond-chapter: SOURCE]`` (see :data:`BEYOND_CHAPTER`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.model.paths import data_root

SOURCES: Final = ("course-code", "course-tests", "js-semantics", "chapter-02")
#: The marker of a clause, or part of one, that the chapter text does not state.
BEYOND_CHAPTER: Final = re.compile(r"\[beyond-chapter:\s*(?P<source>[a-z0-9-]+)\]")


@dataclass(frozen=True)
class Feature:
    """One named behaviour beyond the chapter text."""

    name: str
    description: str
    source: str
    clauses: tuple[str, ...]


def features_file() -> Path:
    """The registry file."""
    return data_root() / "spec" / "features.yaml"


def load_features(path: Path | None = None) -> dict[str, Feature]:
    """The registry, keyed by name (empty when the file does not exist)."""
    path = path or features_file()
    if not path.is_file():
        return {}
    import yaml  # here, not at the top: a process that never reads the registry does not pay for yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = data.get("features") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise ValueError(f"{path}: expected a mapping `features:` of name -> {{description, source, clauses}}")
    features: dict[str, Feature] = {}
    for name, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("description"), str):
            raise ValueError(f"{path}: feature {name!r} needs a description")
        source = str(entry.get("source", ""))
        if source not in SOURCES:
            raise ValueError(f"{path}: feature {name!r}: source {source!r} is not one of {', '.join(SOURCES)}")
        features[str(name)] = Feature(str(name), entry["description"], source, tuple(str(c) for c in entry.get("clauses") or ()))
    return features


def beyond_chapter_sources(text: str) -> tuple[str, ...]:
    """The sources named by the ``[beyond-chapter: SOURCE]`` markers of a clause's text."""
    return tuple(match["source"] for match in BEYOND_CHAPTER.finditer(text))


#: The reason a case is skipped when it depends on a feature the implementation does not claim.
NOT_CLAIMED: Final = re.compile(r"^feature (?P<name>[a-z0-9-]+) not claimed$")


def not_claimed_reason(case_features: tuple[str, ...] | list[str], unclaimed: set[str] | frozenset[str]) -> str | None:
    """``feature NAME not claimed`` for the first of ``case_features`` in ``unclaimed``; None when the case is claimed."""
    name = next((feature for feature in case_features if feature in unclaimed), None)
    return None if name is None else f"feature {name} not claimed"


def is_not_claimed(message: str) -> bool:
    """Whether a skip message says the case's feature was not claimed (counted apart from other skips)."""
    return NOT_CLAIMED.match(message) is not None


def feature_names(profile_areas: tuple[str, ...] = ()) -> list[str]:
    """The names ``--without-feature`` accepts: spec/features.yaml's, and the profile's areas."""
    return sorted({*load_features(), *profile_areas})


def unknown_feature_problem(names: list[str], profile_areas: tuple[str, ...] = ()) -> str | None:
    """A usage error for ``--without-feature`` names that name no feature, listing the valid ones; else None."""
    valid = feature_names(profile_areas)
    unknown = [name for name in names if name not in valid]
    if not unknown:
        return None
    return f"--without-feature: unknown feature {', '.join(map(repr, unknown))}; valid features: {', '.join(valid)}"
