"""Where the tests find the checkout: one definition for every test and helper."""

from __future__ import annotations

from pathlib import Path

#: The repository's root (``tests/support/`` is two levels below it).
REPO = Path(__file__).resolve().parents[2]
#: The fake programs that misbehave on purpose (run as ``cmd:`` submissions).
FAKES = REPO / "tests" / "support" / "fakes"
#: The tests' validation cache, kept from run to run in the checkout (``.cache/`` is ignored by git), never in
#: the user's home. Its entries are keyed by the bytes of the fixture file, of every schema and of the
#: checking code (conformance/loading/validation_cache.py), so an edit to any of them misses and is checked
#: again; an emptied cache per run made every run (one module's too) validate every fixture file again
#: first: about 8 s of CPU, most of what a small test module cost. The private set's probe draws are
#: kept beside it (tests/support/probe_cache.py).
TEST_CACHE = REPO / ".cache" / "validation"
