"""The pi-ai-1 compatibility page: published upstream versions against the same cases (``pi-conformance compat``).

Installs two published versions with npm into ``.cache`` (once) and skips, with npm's reason,
when Node.js, npm or the registry is not there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.judging.outcome import Divergence, Outcome
from conformance.loading.loader import load_suite
from conformance.model.clauses import load_profile_clauses
from conformance.reports.compat_page import VersionRun, render_page
from conformance.reports.compat_targets import COMPAT_TARGETS
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


def test_a_profile_page_names_its_companions_notes_and_failure_groups() -> None:
    target = COMPAT_TARGETS["pi-agent-core-1"]
    suite = load_suite(profile="pi-agent-core-1")
    cases = [case for case in suite.cases if case.id in ("pac-prepare-request-before-every-request", "pac-text-turn-run-agent-loop")]
    passing = [Outcome(case.id, "passed", "", 0.0) for case in cases]
    missing = Divergence("turn_functions.prepare_request", "2 items", "0 items", kind="missing")
    failing = [
        o if c.id != "pac-prepare-request-before-every-request" else Outcome(c.id, "failed", str(missing), 0.0, divergence=missing)
        for c, o in zip(cases, passing, strict=True)
    ]
    clauses = load_profile_clauses("pi-agent-core-1")
    page = render_page(cases, [VersionRun("0.86.1", failing), VersionRun("0.87.0", passing)], ["loop"], target.package, target, clauses)
    assert "(each with `@earendil-works/pi-ai` at the same version)" in page
    assert "upstream 0.87.0's behaviour" in page  # the newest version run, not a fixed one
    assert target.notes["0.87.0"] in page.split("### 0.86.1 → 0.87.0", 1)[1]
    [group] = [line for line in page.split("## Failures by cause", 1)[1].splitlines() if line.startswith("| 1 |")]
    assert "PAC-REQ-1" in group and "turn_functions.prepare_request: missing" in group, group


@needs_node
@needs_npm
def test_pi_agent_core_versions_install_with_pi_ai_at_their_own_version(tmp_path: Path) -> None:
    page = tmp_path / "compat.md"
    options = ["--profile", "pi-agent-core-1", "--version", "1.5.2", "--version", "1.6.0", "--cache", str(REPO / ".cache")]
    result = cli("compat", *options, "--out", str(page), "--sandbox", "none")
    if result.returncode == 3:
        pytest.skip(f"the published versions cannot be installed here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stdout + result.stderr
    for version in ("1.5.2", "1.6.0"):
        manifest = REPO / ".cache" / f"pi-agent-core-{version}" / "node_modules" / "@earendil-works" / "pi-ai" / "package.json"
        assert json.loads(manifest.read_text(encoding="utf-8"))["version"] == version
    text = page.read_text(encoding="utf-8")
    assert "### 1.5.2 → 1.6.0" in text and "| `pac-sequential-later-call-operation-aborted` | PAC-ABORT-2" in text, text
