"""The pi-ai-1 compatibility page: published upstream versions against the same cases (``pi-conformance compat``).

Installs two published versions with npm into ``.cache`` (once) and skips, with npm's reason,
when Node.js, npm or the registry is not there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.judging.outcome import Outcome
from conformance.loading.loader import load_suite
from conformance.reports.compat_page import VersionRun, render_page
from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import needs_node, needs_npm

# 1.4.0 simulates the session cache with another formula; 1.6.0 is the version the cases were read from.
OLDER, NEWER = "1.4.0", "1.6.0"


def test_the_page_lists_each_change_under_the_version_that_brought_it() -> None:
    cases = [case for case in load_suite(profile="pi-ai-1").cases if case.lab == "messages"][:3]
    passing = [Outcome(case.id, "passed", "", 0.0) for case in cases]
    failing = [Outcome(cases[0].id, "failed", "value: expected 1 but got 2", 0.0), *passing[1:]]
    page = render_page(cases, [VersionRun("1.10.0", passing), VersionRun("1.9.0", failing)], ["messages"])
    assert "| 1.9.0 | 2/3 | 2/3 |" in page and "| 1.10.0 | 3/3 | 3/3 |" in page  # numeric version order, not text
    assert "### 1.9.0 → 1.10.0" in page
    [row] = [line for line in page.splitlines() if line.startswith(f"| `{cases[0].id}`")]
    assert "FAIL → pass" in row and "value: expected 1 but got 2" in row and cases[0].clauses[0] in row


@needs_node
@needs_npm
def test_two_published_versions_give_a_page_backed_by_cases(tmp_path: Path) -> None:
    page = tmp_path / "compat.md"
    result = cli("compat", "--version", OLDER, "--version", NEWER, "--cache", str(REPO / ".cache"), "--out", str(page), "--sandbox", "none")
    if result.returncode == 3:
        pytest.skip(f"the published versions cannot be installed here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stdout + result.stderr
    text = page.read_text(encoding="utf-8")
    assert f"### {OLDER} → {NEWER}" in text, text
    assert "| `pa-faux-session-cache-isolated` | PA-FAUX-CACHE-1 |" in text, text
    total = len(load_suite(profile="pi-ai-1").cases)
    assert f"| {NEWER} |" in text and f"{total}/{total} |" in text
