"""Every typo a fixture author is likely to make is one lint problem, at its own line, with a
"did you mean", and the same answer on every run over the same bytes (issue 28)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import validation_cache
from conformance.authoring.lint import lint
from conformance.authoring.problems import Problem
from conformance.loader import load_suite
from tests.test_authoring_support import DEFAULT_PICKS, scratch

MULTI = "ch04/multi-turn-and-requests.yaml"
ABORTS = "ch04/aborts.yaml"
ERRORS = "ch04/error-turns.yaml"
TEXT_OF = "ch03/text-of.yaml"
PICKS = {
    **DEFAULT_PICKS,
    MULTI: ["sm-multi-opening-example-two-text-turns"],
    ABORTS: ["sm-abort-pre-aborted-single-error-next-call-plays-next-turn", "sm-abort-pre-aborted-tool-turn-no-start"],
    ERRORS: ["sm-err-empty-partial-text-either-shape"],
    TEXT_OF: [*DEFAULT_PICKS[TEXT_OF], "text-of-readme-assistant-skips-tool-call"],
}


def edit_line(path: Path, needle: str, old: str, new: str) -> int:
    """Replace ``old`` by ``new`` on the first line holding ``needle``; that line's number."""
    lines = path.read_text(encoding="utf-8").split("\n")
    number = next(index for index, line in enumerate(lines) if needle in line)
    assert old in lines[number]
    lines[number] = lines[number].replace(old, new, 1)
    path.write_text("\n".join(lines), encoding="utf-8")
    return number + 1


def lint_twice(root: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Problem], list[Problem]]:
    """Lint ``root`` twice with one fresh validation cache, as two `make lint` runs would."""
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", str(cache))
    # `run` fills the cache between two lints on the same machine.
    first = lint(root, extra=True)
    load_suite(root)
    return first, lint(root, extra=True)


# -- the same answer every time -------------------------------------------------------------


def test_lint_gives_the_same_problems_twice_with_one_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = scratch(tmp_path, PICKS)
    edit_line(root / MULTI, "contentIndex: 0", "contentIndex", "content_index")
    first, second = lint_twice(root, tmp_path / "cache", monkeypatch)
    assert first == second
    assert any("unknown key 'content_index' (did you mean 'contentIndex'?)" in problem.message for problem in first)


def test_loading_gives_the_same_broken_cases_twice_with_one_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `run` errors the case on both runs, rather than erroring it once and then failing it.
    root = scratch(tmp_path, PICKS)
    edit_line(root / MULTI, "contentIndex: 0", "contentIndex", "content_index")
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    first = load_suite(root)
    assert [case.id for case in first.broken] == ["sm-multi-opening-example-two-text-turns"]
    assert load_suite(root).broken == first.broken


def test_lint_trusts_no_cache_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The cache is per user: an entry another checkout wrote (here, forged) never hides a problem.
    root = scratch(tmp_path, PICKS)
    path = root / MULTI
    edit_line(path, "contentIndex: 0", "contentIndex", "content_index")
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("PI_CONFORMANCE_CACHE", str(cache))
    (cache / validation_cache.key(path.read_text(encoding="utf-8"))).touch()
    assert any("content_index" in problem.message for problem in lint(root, extra=True))


def test_a_change_to_the_checking_code_changes_every_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = validation_cache.key("chapter: '03'\n")
    validation_cache._checks_digest.cache_clear()
    monkeypatch.setattr(validation_cache, "_CHECKING_MODULES", (*validation_cache._CHECKING_MODULES, "paths.py"))
    try:
        assert validation_cache.key("chapter: '03'\n") != before
    finally:
        validation_cache._checks_digest.cache_clear()
