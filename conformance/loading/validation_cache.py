"""Remember fixture files that already passed schema validation, keyed by content.

Schema validation is most of the cost of loading the fixtures, and staff run the same
fixtures once per submission. The key is a hash of the file's bytes, of every schema's
bytes and of the checking code itself, so any edit to any of them makes the entry miss.
Only a file that passed every check is stored: a mark written after the schema alone
passed would let a later run skip the checks after it and give a different answer. Set
``PI_CONFORMANCE_CACHE=off`` to disable it, or to a folder to move it.

``fixtures lint`` reads nothing from it (:func:`bypassed`): the cache is per user, so an
entry may come from another checkout's code, and lint is the check CI relies on.

Besides the "validated" marks, a file whose every case loaded is kept parsed (its cases as
JSON), keyed also by its name, the profile and the clause registry: a hit skips YAML, the
schemas and jsonschema's import altogether.

A wheel ships such entries for its own fixtures (:data:`SHIPPED_PROOF`, written when the wheel is
built by :mod:`conformance.loading.shipped_proof`): the proof that they passed every check, under
the same keys, so the first run of a fresh install does not check them again. Its entries are
read only for the fixture files bundled in the package (never for a folder given with
``--fixtures``, even a copy), and only when the key matches: an edited fixture, schema or checking
module misses and is checked as usual.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from conformance.common.user_cache import cache_folder
from conformance.model.cases import Case
from conformance.model.paths import bundled_fixtures_dir, schemas_dir

#: The modules whose code decides whether a file is valid and what its cases hold: their bytes
#: are part of every key, so a checkout whose checks differ never reads this one's entries.
_CHECKING_MODULES = (
    "loading/validation_cache.py",
    "loading/loader.py",
    "loading/file_reading.py",
    "loading/case_checks.py",
    "loading/schema_errors.py",
    "loading/quick_schema.py",
    "loading/expected_keys.py",
    "loading/shared_files.py",
    "model/cases.py",
    "loading/broken_yaml.py",
    "yamlio/safe.py",
    "judging/matcher.py",
    "model/features.py",
    "model/function_features.py",
    "model/agent_features.py",
    "model/agent_class_features.py",
    "model/input_features.py",
    "model/profiles.py",
    "loading/pi_ai_shapes.py",
)
_bypass_depth = 0
#: The parsed entries of the bundled fixtures, checked when the wheel was built (absent in a checkout).
SHIPPED_PROOF = Path(__file__).resolve().parents[1] / "_data" / "validated-cases.json"


@cache
def _checks_digest() -> bytes:
    digest = hashlib.sha256(b"checks-2\0")
    package = Path(__file__).resolve().parents[1]  # the conformance package
    for name in _CHECKING_MODULES:
        try:
            digest.update(name.encode() + b"\0" + (package / name).read_bytes() + b"\0")
        except OSError:  # a module missing from an odd install: never match an entry
            digest.update(os.urandom(16))
    return digest.digest()


@contextmanager
def bypassed() -> Iterator[None]:
    """Inside this block nothing is read from or written to the cache (``fixtures lint``)."""
    global _bypass_depth
    _bypass_depth += 1
    try:
        yield
    finally:
        _bypass_depth -= 1


def _cache_dir() -> Path | None:
    return None if _bypass_depth else cache_folder("validated")


@cache
def _schemas_digest(folder: Path) -> bytes:
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.schema.json")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


def key(text: str) -> str:
    """The cache key of a fixture file's text under the current schemas."""
    return hashlib.sha256(_checks_digest() + _schemas_digest(schemas_dir()) + text.encode("utf-8")).hexdigest()


def known_valid(text: str) -> bool:
    """True when this exact text already validated against these exact schemas."""
    folder = _cache_dir()
    return folder is not None and (folder / key(text)).is_file()


def remember_valid(text: str) -> None:
    """Record that ``text`` passed every check; a cache that cannot be written is simply skipped."""
    folder = _cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / key(text)).touch()
    except OSError:
        pass


# Bumped when the loader's parsing (what a Case holds, how it is built) changes.
_PARSED = b"parsed-cases-1\0"
_TUPLE_FIELDS = ("clauses", "steps", "hint", "features", "step_lines")


def parsed_key(data: bytes, relative: str, profile: str, clauses: Iterable[str]) -> str:
    """The parsed-cache key of a fixture file's bytes, as loaded under this name, profile and clause registry."""
    digest = hashlib.sha256(_PARSED + _checks_digest() + _schemas_digest(schemas_dir()))
    digest.update(f"{relative}\0{profile}\0{chr(31).join(sorted(clauses))}\0".encode())
    digest.update(data)
    return "parsed-" + digest.hexdigest()


def load_parsed(key: str, path: Path | None = None) -> list[Case] | None:
    """The cases stored under ``key``, or None (no entry, no cache, or an unreadable entry).

    ``path`` is the fixture file the key was made from: when it is one the package bundles, the
    wheel's shipped proof answers too (the user's cache first).
    """
    folder = _cache_dir()
    if folder is None:
        return None
    try:
        return _cases_of(json.loads((folder / key).read_bytes()))
    except (OSError, ValueError, TypeError, KeyError):
        pass
    if path is None or not _is_bundled(path):
        return None
    shipped = _shipped_proof().get(key)
    try:
        return _cases_of(shipped) if shipped is not None else None
    except (ValueError, TypeError, KeyError):
        return None


def _cases_of(stored: list[dict[str, Any]]) -> list[Case]:
    cases: list[Case] = []
    for entry in stored:
        fields = dict(entry)  # the shipped proof's entries are shared: never change them in place
        for name in _TUPLE_FIELDS:
            fields[name] = tuple(fields[name])
        cases.append(Case(**fields))
    return cases


def _is_bundled(path: Path) -> bool:
    """True for a fixture file inside the installed package's own fixtures (not a checkout's, not a copy)."""
    return path.resolve().is_relative_to(bundled_fixtures_dir())


@cache
def _shipped_proof() -> dict[str, list[dict[str, Any]]]:
    try:
        proof = json.loads(SHIPPED_PROOF.read_bytes())
    except (OSError, ValueError):
        return {}
    return proof if isinstance(proof, dict) else {}


def parsed_entries(folder: Path) -> dict[str, object]:
    """Every parsed entry stored in the cache folder ``folder`` (what a wheel ships as its proof)."""
    return {path.name: json.loads(path.read_bytes()) for path in sorted(folder.glob("parsed-*")) if "." not in path.name}


def store_parsed(key: str, cases: Sequence[object]) -> None:
    """Store the cases of a file that loaded without a problem; a cache that cannot be written is skipped."""
    folder = _cache_dir()
    if folder is None:
        return
    fields = [{f.name: getattr(case, f.name) for f in dataclasses.fields(Case)} for case in cases]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f"{key}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(fields, ensure_ascii=False), encoding="utf-8")
        temporary.replace(folder / key)
    except (OSError, TypeError, ValueError):
        pass
