"""Where the tests find the checkout: one definition for every test and helper."""

from __future__ import annotations

from pathlib import Path

#: The repository's root (``tests/support/`` is two levels below it).
REPO = Path(__file__).resolve().parents[2]
#: The fake programs that misbehave on purpose (run as ``cmd:`` submissions).
FAKES = REPO / "tests" / "support" / "fakes"
