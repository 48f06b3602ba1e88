"""A profile's compatibility page: every published upstream version in range against the same cases.

The cases' expected values are the newest version's behaviour (the profile's reference), so a
case that fails on an older version is a behaviour that changed since: the page lists, per
version, what passes per area, and per change which version brought it, each row a case with
its clauses (so every claim is backed by a case anyone can run), then each older version's
failures grouped by cause. ``pi-conformance compat`` installs the versions with npm (into a
cache folder, once each, with their companions at the same version,
:mod:`.compat_targets`) and writes the page; see :func:`write_page`.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.adapters.kinds import submission_kind
from conformance.judging.failure_groups import group_failures
from conformance.judging.outcome import Outcome
from conformance.model.cases import Case
from conformance.model.clauses import Clause
from conformance.reports.compat_targets import COMPAT_TARGETS, CompatTarget

PI_AI_1_TARGET = COMPAT_TARGETS["pi-ai-1"]
PACKAGE = PI_AI_1_TARGET.package
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


def published_versions(package: str = PACKAGE, since: str = PI_AI_1_TARGET.since) -> list[str]:
    """The published ``X.Y.Z`` releases from ``since`` on (no pre-releases), oldest first, as the registry lists them."""
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
    return sorted((v for v in versions if _VERSION.match(v) and version_key(v) >= version_key(since)), key=version_key)


def _installed_version(prefix: Path, package: str) -> str | None:
    try:
        manifest = json.loads((prefix / "node_modules" / package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = manifest.get("version") if isinstance(manifest, dict) else None
    return version if isinstance(version, str) else None


def install(version: str, cache: Path, package: str = PACKAGE, companions: Sequence[str] = ()) -> Path:
    """The install prefix of ``package@version`` (and each companion at that version) under ``cache``, installing it first when needed.

    Installed aside and renamed into place under a lock: two runs at once install it once, and
    an install cut short never leaves a folder that looks installed. A folder whose companion
    is at another version (an install made without it) is installed again.
    """
    slug = package.rsplit("/", 1)[-1]
    prefix = cache / f"{slug}-{version}"
    wanted = [package, *companions]
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / f"{slug}-{version}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(_installed_version(prefix, name) == version for name in wanted):
            return prefix
        partial = prefix.with_name(prefix.name + ".partial")
        for folder in (prefix, partial):
            shutil.rmtree(folder, ignore_errors=True)
        specs = [f"{name}@{version}" for name in wanted]
        command = [_npm(), "install", "--prefix", str(partial), "--no-audit", "--no-fund", "--loglevel=error", *specs]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=NPM_TIMEOUT_S)
        except subprocess.TimeoutExpired as error:
            raise CompatUnavailable(
                f"npm could not install {' '.join(specs)} within {NPM_TIMEOUT_S} s (is the registry reachable?)"
            ) from error
        if result.returncode != 0:
            tail = " / ".join((result.stderr or result.stdout).strip().splitlines()[-2:])
            raise CompatUnavailable(f"npm could not install {' '.join(specs)} (is the registry reachable?): {tail}")
        partial.rename(prefix)
    return prefix


def _cell(outcome: Outcome) -> str:
    return {"passed": "pass", "failed": "FAIL", "errored": "error", "skipped": "skip"}.get(outcome.status, outcome.status)


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split()).replace("|", "\\|")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def render_page(
    cases: Sequence[Case],
    runs: Sequence[VersionRun],
    areas: Sequence[str],
    package: str = PACKAGE,
    target: CompatTarget = PI_AI_1_TARGET,
    clauses: Mapping[str, Clause] | None = None,
) -> str:
    """The Markdown page: passes per version and area, every change between versions backed by its case, the failures by cause."""
    runs = sorted(runs, key=lambda run: version_key(run.version))
    newest = runs[-1].version if runs else "?"
    profile = target.profile
    companions = ", ".join(f"`{name}`" for name in target.companions)
    lines = [
        f"# `{package}` {target.versions_in_words} against profile {profile}",
        "",
        f"Generated by `pi-conformance compat --profile {profile}` (do not edit by hand): every published",
        f"version {target.versions_in_words} installed from npm"
        + (f" (each with {companions} at the same version)" if companions else "")
        + f" and run against the {profile} cases. The cases' expected values are",
        f"upstream {newest}'s behaviour (`spec/{profile}/spec.md`), so a case that fails on a version is a",
        "behaviour that version does not have yet; each row below names the case that shows it",
        f"(`pi-conformance run --profile {profile} --impl {submission_kind(profile).usage} -k ID`).",
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
    lines += _changes(cases, runs, target.notes)
    still = [(case, [run.version for run in runs if run.outcomes[i].status != "passed"]) for i, case in enumerate(cases)]
    still = [(case, versions) for case, versions in still if runs and runs[-1].version in versions]
    if still:
        lines += [f"## Failing on {newest} too", "", "| case | clauses | versions |", "|---|---|---|"]
        lines += [f"| `{case.id}` | {', '.join(case.clauses)} | {', '.join(versions)} |" for case, versions in still]
        lines.append("")
    if clauses is not None:
        lines += _groups(cases, runs, clauses)
    return "\n".join(lines)


def _changes(cases: Sequence[Case], runs: Sequence[VersionRun], notes: Mapping[str, str]) -> list[str]:
    """One table per pair of consecutive versions: what changed (the target's note), each case whose outcome changed."""
    lines: list[str] = []
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
            note = notes.get(later.version)
            lines += [f"### {earlier.version} → {later.version}", "", *([note, ""] if note else [])]
            lines += [
                "| case | clauses | behaviour | outcome | what the older version did |",
                "|---|---|---|---|---|",
                *rows,
                "",
            ]
    return lines or ["No case changes its outcome between these versions.", ""]


def _groups(cases: Sequence[Case], runs: Sequence[VersionRun], clauses: Mapping[str, Clause]) -> list[str]:
    """Each version's failures grouped by cause (conformance/judging/failure_groups.py), the group's size and clause."""
    lines = [
        "## Failures by cause",
        "",
        "Each older version's failing cases grouped by their first divergence (as `pi-conformance run` groups",
        "them): one group per behaviour the version lacks. The clause is the group's example's.",
        "",
    ]
    for run in runs:
        failed = [(case, outcome) for case, outcome in zip(cases, run.outcomes, strict=True) if outcome.status in ("failed", "errored")]
        if not failed:
            continue
        lines += [f"### {run.version}", "", "| cases | clause | cause | example |", "|---|---|---|---|"]
        for group in group_failures(failed, clauses):
            example, _ = group.example
            lines.append(f"| {len(group.members)} | {group.clause or ''} | {_one_line(str(group.cause), 120)} | `{example.id}` |")
        lines.append("")
    return lines


def write_page(
    path: Path,
    cases: Sequence[Case],
    runs: Sequence[VersionRun],
    areas: Sequence[str],
    package: str = PACKAGE,
    target: CompatTarget = PI_AI_1_TARGET,
    clauses: Mapping[str, Clause] | None = None,
) -> None:
    """Write :func:`render_page` to ``path`` (its folder made when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_page(cases, runs, areas, package, target, clauses), encoding="utf-8")
