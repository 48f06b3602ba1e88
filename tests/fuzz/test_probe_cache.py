"""The private set's probe draws kept in the user's cache (:mod:`conformance.fuzz.probe_cache`, issue 32).

A cached answer is read instead of drawn, and only while the code that draws is the same:
a changed drawing module, a broken file or a cache turned off draws again. What a warm cache
gives is what drawing gives.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from conformance.common.user_cache import cache_folder
from conformance.fuzz import private, probe_cache
from tests.support.paths import REPO, TEST_CACHE
from tests.support.requirements import costly

ANSWER = frozenset({"a", "b"})


class _Draw:
    """A stand-in for the probes' draws that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> frozenset[str]:
        self.calls += 1
        return ANSWER


def test_a_second_run_reads_the_first_ones_draws(tmp_path: Path) -> None:
    draw = _Draw()
    assert probe_cache.cached_draws(draw, tmp_path) == ANSWER
    assert probe_cache.cached_draws(draw, tmp_path) == ANSWER
    assert draw.calls == 1
    [stored] = tmp_path.glob("probe-draws-*.json")
    assert json.loads(stored.read_text(encoding="utf-8")) == sorted(ANSWER)


@pytest.mark.parametrize("text", ["not json", '{"a": 1}', "[1, 2]"])
def test_a_file_that_is_not_a_list_of_strings_is_drawn_again_and_replaced(tmp_path: Path, text: str) -> None:
    (tmp_path / f"probe-draws-{probe_cache.probe_key()}.json").write_text(text, encoding="utf-8")
    draw = _Draw()
    assert probe_cache.cached_draws(draw, tmp_path) == ANSWER
    assert draw.calls == 1
    assert probe_cache.cached_draws(draw, tmp_path) == ANSWER and draw.calls == 1


def test_without_a_cache_every_call_draws_and_an_unwritable_one_is_skipped(tmp_path: Path) -> None:
    draw = _Draw()
    probe_cache.cached_draws(draw, None)
    probe_cache.cached_draws(draw, None)
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    assert probe_cache.cached_draws(draw, blocked / "cache") == ANSWER  # its folder cannot be made
    assert draw.calls == 3


def test_writing_removes_other_installs_files_unused_for_a_while_and_a_hit_marks_its_file_used(tmp_path: Path) -> None:
    old, recent = tmp_path / "probe-draws-old.json", tmp_path / "probe-draws-recent.json"
    unrelated = tmp_path / "validated-mark"
    for path in (old, recent, unrelated):
        path.write_text("[]", encoding="utf-8")
    long_ago = time.time() - (probe_cache.UNUSED_DAYS + 1) * 86400
    for path in (old, unrelated):
        os.utime(path, (long_ago, long_ago))
    probe_cache.cached_draws(_Draw(), tmp_path)
    assert not old.exists() and recent.exists() and unrelated.exists()
    [mine] = [path for path in tmp_path.glob("probe-draws-*.json") if path != recent]
    os.utime(mine, (long_ago, long_ago))
    probe_cache.cached_draws(_Draw(), tmp_path)  # a hit
    assert mine.stat().st_mtime > long_ago + 86400


def test_the_key_changes_with_a_drawing_modules_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "conformance"
    for folder in ("fuzz", "yamlio", "common", "model"):
        shutil.copytree(REPO / "conformance" / folder, package / folder)
    monkeypatch.setattr(probe_cache, "_PACKAGE", package)
    probe_cache.probe_key.cache_clear()
    try:
        before = probe_cache.probe_key()
        probe_cache.probe_key.cache_clear()
        assert probe_cache.probe_key() == before  # the same bytes elsewhere: the same key
        strategies = package / "fuzz" / "strategies_agent.py"
        strategies.write_text(strategies.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
        probe_cache.probe_key.cache_clear()
        assert probe_cache.probe_key() != before
    finally:
        probe_cache.probe_key.cache_clear()


def test_the_cache_folder_is_the_users_or_the_one_the_environment_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PI_CONFORMANCE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder("probes") == tmp_path / "pi-conformance" / "probes"
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", str(tmp_path / "one"))
    assert cache_folder("probes") == cache_folder("validated") == tmp_path / "one"
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", "off")
    assert cache_folder("probes") is None


@costly
def test_a_warm_cache_gives_what_drawing_gives() -> None:
    # The tests' cache (PI_CONFORMANCE_CACHE, tests/conftest.py) holds this checkout's probes once any set was drawn.
    warm = probe_cache.cached_draws(private.draw_predictable_inputs, TEST_CACHE)
    assert (TEST_CACHE / f"probe-draws-{probe_cache.probe_key()}.json").is_file()
    assert warm == private.draw_predictable_inputs()
