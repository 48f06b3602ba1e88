"""Baselines: the cases a port is known not to pass yet, each with a reason.

A porter runs ``pi-conformance run --baseline known.yaml`` in CI: a listed case that does
not pass is expected; an unlisted case that does not pass is *unexpected* (a regression);
a listed case that passes now makes the baseline *stale* (remove it, so it stays fixed).
Either fails the run. ``--write-baseline FILE`` writes one from a run's results. The file
is YAML or JSON, validated by ``spec/schemas/baseline.schema.json``::

    version: 1
    implementation: my-port
    cases:
      sm-json-large-integral-float: "our JSON writer prints 1e21 as 1e+21"
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from conformance.common.jsontypes import JsonObject
from conformance.model.schemas import validator
from conformance.yamlio.settings_file import read_yaml

_REASON_LIMIT = 200


class BaselineError(ValueError):
    """A baseline file that cannot be read or is not valid."""


@dataclass(frozen=True)
class Baseline:
    """Known failures: case id -> reason."""

    cases: Mapping[str, str]
    implementation: str | None = None
    source: str = "baseline"


def load_baseline(path: Path) -> Baseline:
    """Read and validate a baseline file (YAML or JSON)."""
    return parse_baseline(read_yaml(path, "baseline", BaselineError), str(path))


def parse_baseline(data: object, source: str = "baseline") -> Baseline:
    """Validate baseline data and build the :class:`Baseline`."""
    errors = list(validator("baseline.schema.json").iter_errors(data))
    if errors:
        lines = [f"  {'.'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}" for error in errors]
        raise BaselineError(f"{source}: not a valid baseline (spec/schemas/baseline.schema.json):\n" + "\n".join(lines))
    assert isinstance(data, dict)
    implementation = data.get("implementation")
    return Baseline(dict(data["cases"]), str(implementation) if implementation is not None else None, source)


@dataclass(frozen=True)
class Verdict:
    """How a run compares with a baseline."""

    expected: list[str] = field(default_factory=list)
    unexpected: list[tuple[str, str]] = field(default_factory=list)
    stale: list[tuple[str, str]] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        """True when nothing unexpected failed and no entry is stale."""
        return not self.unexpected and not self.stale

    def lines(self, source: str) -> list[str]:
        """A short report for the terminal."""
        lines = [f"baseline {source}: {len(self.expected)} known failures, {len(self.unexpected)} unexpected, {len(self.stale)} stale"]
        for case_id, status in self.unexpected:
            lines.append(f"  unexpected: {case_id} {status}; fix it, or add it to the baseline with a reason")
        for case_id, why in self.stale:
            lines.append(f"  stale:      {case_id} {why}; remove it from the baseline")
        return lines


def compare(baseline: Baseline, results: Iterable[tuple[str, str]], known_ids: Iterable[str] | None = None) -> Verdict:
    """Compare ``(case id, status)`` results with the baseline.

    ``known_ids`` are every case id of the suite: a baselined id that is not one of them
    is stale (case ids are never reused, so it is a typo or a removed case). Baselined
    cases that exist but were not selected in this run are left alone.
    """
    verdict = Verdict()
    seen: set[str] = set()
    for case_id, status in results:
        seen.add(case_id)
        listed = case_id in baseline.cases
        if status == "passed":
            if listed:
                verdict.stale.append((case_id, "passes now"))
        elif listed:
            verdict.expected.append(case_id)
        else:
            verdict.unexpected.append((case_id, status))
    if known_ids is not None:
        known = set(known_ids)
        verdict.stale.extend(
            (case_id, "is not a case of this suite") for case_id in baseline.cases if case_id not in known and case_id not in seen
        )
    return verdict


def baseline_document(
    results: Iterable[tuple[str, str, str]], previous: Baseline | None = None, implementation: str | None = None
) -> JsonObject:
    """A baseline listing every ``(case id, status, message)`` that did not pass.

    Reasons already written in ``previous`` are kept (people write better reasons than
    the first line of a message); new entries get the status and that first line.
    """
    cases: dict[str, str] = {}
    for case_id, status, message in results:
        if status == "passed":
            continue
        if previous is not None and case_id in previous.cases:
            cases[case_id] = previous.cases[case_id]
            continue
        first = message.strip().splitlines()[0] if message.strip() else ""
        reason = f"{status}: {first}" if first else status
        cases[case_id] = reason if len(reason) <= _REASON_LIMIT else reason[: _REASON_LIMIT - 1] + "…"
    document: JsonObject = {"version": 1}
    if implementation:
        document["implementation"] = implementation
    document["cases"] = dict(cases)
    return document


def write_baseline(path: Path, document: JsonObject) -> None:
    """Write a baseline as YAML (or JSON when the file name ends in ``.json``)."""
    if path.suffix == ".json":
        import json

        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    else:
        header = "# yaml-language-server: $schema=https://pi-conformance.dev/schemas/baseline.schema.json\n"
        header += "# Known failures: case id -> reason (pi-conformance run --baseline). Replace the reasons with why.\n"
        text = header + yaml.safe_dump(document, allow_unicode=True, sort_keys=False, width=1000)
    from conformance.common.atomic_file import write_text_atomic

    write_text_atomic(path, text)
