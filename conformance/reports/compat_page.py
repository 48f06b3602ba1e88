"""The pi-ai-1 compatibility page: every published 1.x version of upstream against the same cases.

The cases' expected values are upstream 1.6.0's behaviour, so a case that fails on an older
version is a behaviour that changed since: the page lists, per version, what passes per area,
and per change which version brought it, each row a case with its clauses (so every claim is
backed by a case anyone can run). ``pi-conformance compat`` installs the versions with npm
(into a cache folder, once each) and writes the page; see :func:`write_page`.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.adapters.kinds import submission_kind
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.model.profiles import PI_AI_1

PACKAGE = "@earendil-works/pi-ai"
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
NPM_TIMEOUT_S = 300


class CompatUnavailable(RuntimeError):
    """npm, Node.js or the registry is not there: the page cannot be made (the message says which)."""


@dataclass(frozen=True)
class VersionRun:
    """One installed version and its outcomes, in the cases' order."""

    version: str
    outcomes: list[Outcome]


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise CompatUnavailable("Node.js and npm are needed to install the published versions and are not on PATH")
    return npm


def version_key(version: str) -> tuple[int, ...]:
    """Numeric order of an ``X.Y.Z`` version."""
    match = _VERSION.match(version)
    return tuple(int(part) for part in match.groups()) if match else (-1,)


def published_versions(package: str = PACKAGE, major: int = 1) -> list[str]:
    """The published ``major.x.y`` releases (no pre-releases), oldest first, as the registry lists them."""
    command = [_npm(), "view", package, "versions", "--json"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=NPM_TIMEOUT_S)
    except subprocess.TimeoutExpired as error:
        raise CompatUnavailable(f"npm view {package} did not answer within {NPM_TIMEOUT_S} s (is the registry reachable?)") from error
    if result.returncode != 0:
        tail = " / ".join((result.stderr or result.stdout).strip().splitlines()[-2:])
        raise CompatUnavailable(f"npm view {package} failed (is the registry reachable?): {tail}")
    try:
        listed = json.loads(result.stdout)
    except ValueError as error:
        raise CompatUnavailable(f"npm view {package} gave no JSON list") from error
    versions = [str(item) for item in (listed if isinstance(listed, list) else [listed])]
    return sorted((v for v in versions if _VERSION.match(v) and version_key(v)[0] == major), key=version_key)


def install(version: str, cache: Path, package: str = PACKAGE) -> Path:
    """The install prefix of ``package@version`` under ``cache``, installing it first when needed.

    Installed aside and renamed into place under a lock: two runs at once install it once, and
    an install cut short never leaves a folder that looks installed.
    """
    slug = package.rsplit("/", 1)[-1]
    prefix = cache / f"{slug}-{version}"
    manifest = prefix / "node_modules" / package / "package.json"
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / f"{slug}-{version}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if manifest.is_file():
            return prefix
        partial = prefix.with_name(prefix.name + ".partial")
        for folder in (prefix, partial):
            shutil.rmtree(folder, ignore_errors=True)
        command = [_npm(), "install", "--prefix", str(partial), "--no-audit", "--no-fund", "--loglevel=error", f"{package}@{version}"]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=NPM_TIMEOUT_S)
        except subprocess.TimeoutExpired as error:
            raise CompatUnavailable(
                f"npm could not install {package}@{version} within {NPM_TIMEOUT_S} s (is the registry reachable?)"
            ) from error
        if result.returncode != 0:
            tail = " / ".join((result.stderr or result.stdout).strip().splitlines()[-2:])
            raise CompatUnavailable(f"npm could not install {package}@{version} (is the registry reachable?): {tail}")
        partial.rename(prefix)
    return prefix


def _cell(outcome: Outcome) -> str:
    return {"passed": "pass", "failed": "FAIL", "errored": "error", "skipped": "skip"}.get(outcome.status, outcome.status)


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split()).replace("|", "\\|")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def render_page(cases: Sequence[Case], runs: Sequence[VersionRun], areas: Sequence[str], package: str = PACKAGE) -> str:
    """The Markdown page: passes per version and area, then every change between versions, each backed by its case."""
    runs = sorted(runs, key=lambda run: version_key(run.version))
    newest = runs[-1].version if runs else "?"
    lines = [
        f"# `{package}` 1.x against profile pi-ai-1",
        "",
        "Generated by `pi-conformance compat` (do not edit by hand): every published 1.x version",
        "installed from npm and run against the pi-ai-1 cases. The cases' expected values are",
        "upstream 1.6.0's behaviour (`spec/pi-ai-1/spec.md`), so a case that fails on a version is a",
        "behaviour that version does not have yet; each row below names the case that shows it",
        f"(`pi-conformance run --profile pi-ai-1 --impl {submission_kind(PI_AI_1.name).usage} -k ID`).",
        "",
        "## Passed per area",
        "",
        "| version | " + " | ".join(areas) + " | total |",
        "|---|" + "---|" * (len(areas) + 1),
    ]
    by_area = {area: [index for index, case in enumerate(cases) if case.lab == area] for area in areas}
    for run in runs:
        cells = []
        for area in areas:
            indexes = by_area[area]
            cells.append(f"{sum(run.outcomes[i].status == 'passed' for i in indexes)}/{len(indexes)}")
        total = sum(outcome.status == "passed" for outcome in run.outcomes)
        lines.append(f"| {run.version} | " + " | ".join(cells) + f" | {total}/{len(cases)} |")
    lines += ["", "## What changed in which version", ""]
    changes = 0
    for earlier, later in itertools.pairwise(runs):
        rows = []
        for index, case in enumerate(cases):
            before, after = earlier.outcomes[index], later.outcomes[index]
            if before.status != after.status:
                clauses = ", ".join(case.clauses)
                rows.append(
                    f"| `{case.id}` | {clauses} | {_one_line(case.description)} | {_cell(before)} → {_cell(after)} | "
                    f"{_one_line(before.message if before.status != 'passed' else after.message, 120)} |"
                )
        if rows:
            changes += len(rows)
            lines += [
                f"### {earlier.version} → {later.version}",
                "",
                "| case | clauses | behaviour | outcome | what the older version did |",
                "|---|---|---|---|---|",
                *rows,
                "",
            ]
    if changes == 0:
        lines += ["No case changes its outcome between these versions.", ""]
    still = [(case, [run.version for run in runs if run.outcomes[i].status != "passed"]) for i, case in enumerate(cases)]
    still = [(case, versions) for case, versions in still if runs and runs[-1].version in versions]
    if still:
        lines += [f"## Failing on {newest} too", "", "| case | clauses | versions |", "|---|---|---|"]
        lines += [f"| `{case.id}` | {', '.join(case.clauses)} | {', '.join(versions)} |" for case, versions in still]
        lines.append("")
    return "\n".join(lines)


def write_page(path: Path, cases: Sequence[Case], runs: Sequence[VersionRun], areas: Sequence[str], package: str = PACKAGE) -> None:
    """Write :func:`render_page` to ``path`` (its folder made when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_page(cases, runs, areas, package), encoding="utf-8")
