"""The proof a wheel ships that its bundled fixtures were checked: used for those files only, and only while it matches."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.loading import loader, validation_cache
from conformance.loading.shipped_proof import write_proof
from conformance.model.paths import fixtures_dir
from tests.support.requirements import costly


@pytest.fixture(scope="module")
def proof(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The proof written from the bundled fixtures (every profile), once for the module."""
    written = tmp_path_factory.mktemp("proof") / "validated-cases.json"
    assert write_proof(written) > 0
    return written


@pytest.fixture
def shipped(proof: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The proof installed as the package's own, with an empty user cache.

    Here (a checkout) the bundled fixtures are the checkout's: the test makes them the "bundled" ones.
    """
    monkeypatch.setattr(validation_cache, "SHIPPED_PROOF", proof)
    monkeypatch.setattr(validation_cache, "bundled_fixtures_dir", lambda: fixtures_dir().resolve())
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", str(tmp_path / "user-cache"))
    validation_cache._shipped_proof.cache_clear()
    yield proof
    validation_cache._shipped_proof.cache_clear()


def _parsing_forbidden(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []

    def record(path: Path, relative: str, *args: object, **kwargs: object) -> Iterator[object]:
        parsed.append(relative)
        return iter(())

    monkeypatch.setattr(loader, "_parse_file", record)
    return parsed


@costly
def test_the_bundled_suite_loads_from_the_proof_without_checking_a_file(shipped: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [case.id for case in loader.load_suite().cases]
    parsed = _parsing_forbidden(monkeypatch)
    suite = loader.load_suite()
    assert parsed == [] and [case.id for case in suite.cases] == expected and not suite.broken


def test_a_copy_of_the_bundled_fixtures_elsewhere_is_checked_even_when_its_bytes_match(
    shipped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "copy" / "fixtures"
    shutil.copytree(fixtures_dir(), copy)
    parsed = _parsing_forbidden(monkeypatch)
    loader.load_suite(copy)
    assert len(parsed) == len(loader.fixture_files(copy))


def test_an_edited_bundled_fixture_misses_the_proof_and_is_checked(shipped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundled = tmp_path / "bundled" / "fixtures"
    shutil.copytree(fixtures_dir(), bundled)
    monkeypatch.setattr(validation_cache, "bundled_fixtures_dir", lambda: bundled.resolve())
    edited = loader.fixture_files(bundled)[0]
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    parsed = _parsing_forbidden(monkeypatch)
    loader.load_suite(bundled)
    assert parsed == [loader.display_path(edited, bundled)]


def test_the_proof_is_off_with_the_cache(shipped: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", "off")
    parsed = _parsing_forbidden(monkeypatch)
    loader.load_suite()
    assert len(parsed) == len(loader.fixture_files(fixtures_dir()))
