"""What each JavaScript course project under ``tests/support/js`` must produce (``variants.json``), and the check against it."""

from __future__ import annotations

import json
from collections import Counter

from conformance.judging.outcome import Outcome
from conformance.loading.loader import Suite
from tests.support.js_variants import JS

#: Per folder under tests/support/js: the case it must fail, its message, and the per-lab counts.
EXPECTATIONS: dict[str, dict[str, object]] = {
    name: value for name, value in json.loads((JS / "variants.json").read_text(encoding="utf-8")).items() if not name.startswith("_")
}


def expected_outcomes(spec: dict[str, object]) -> dict[str, dict[str, int | str]]:
    """A variants.json entry's per-lab outcomes under the Node.js on PATH: ``outcomes_isolated`` where lab isolation holds."""
    from conformance.adapters.lab_isolation import isolates
    from conformance.adapters.pi_course import find_node, node_version

    isolated = "outcomes_isolated" in spec and isolates("node", node_version(find_node()))
    return spec["outcomes_isolated" if isolated else "outcomes"]  # type: ignore[return-value]


def per_lab(results: dict[str, Outcome], suite: Suite) -> dict[str, dict[str, int]]:
    """Per lab, how many of ``results`` ended with each status."""
    labs = {case.id: case.lab for case in suite.cases}
    counts: dict[str, Counter[str]] = {}
    for case_id, outcome in results.items():
        counts.setdefault(labs[case_id], Counter())[outcome.status] += 1
    return {lab: dict(counter) for lab, counter in sorted(counts.items())}


def outcome_problems(expected: dict[str, dict[str, int | str]], results: dict[str, Outcome], suite: Suite) -> list[str]:
    """How measured per-lab counts differ from a variants.json entry (lab sizes come from ``suite``).

    A listed status needs at least its measured count (``"all"``: every case of the lab); a
    status not listed needs none, except ``passed``, which takes every case left.
    """
    measured = per_lab(results, suite)
    sizes = Counter(case.lab for case in suite.cases)
    problems: list[str] = []
    for lab, size in sorted(sizes.items()):
        wanted = expected.get(lab, {})
        got = measured.get(lab, {})
        for status, count in got.items():
            if status == "passed":
                continue
            minimum = wanted.get(status)
            if minimum is None:
                problems.append(f"lab {lab}: {count} {status}, expected none")
            elif (size if minimum == "all" else int(minimum)) > count:
                problems.append(f"lab {lab}: {count} {status}, expected at least {minimum} (of {size})")
        for status, minimum in wanted.items():
            if status not in got:
                problems.append(f"lab {lab}: no case {status}, expected {minimum}")
    return problems
