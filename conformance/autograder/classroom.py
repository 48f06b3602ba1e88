"""The GitHub Classroom workflow a course puts in its template repository: one test per lab, with its points.

GitHub Classroom's autograding runs ``.github/workflows/classroom.yml`` in each student's
repository on every push. Each lab is one ``classroom-resources/autograding-command-grader@v1``
step whose command is ``pi-conformance check . --lab LAB``: it prints the grader's feedback
into the run log and exits 0 only when the lab is full, so the step earns the lab's points
(the rubric's weight) or none; ``autograding-grading-reporter@v1`` adds them up.

The workflow sits in every student's repository, where they can read it: it checks the
public cases only, and a held-out set has no place in it (grade those with ``grade-batch``
or the Gradescope autograder).
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance import __version__
from conformance.grading.rubric import Rubric

WORKFLOW = Path(".github") / "workflows" / "classroom.yml"
#: Minutes each lab's command may take (the command grader's ``timeout``): install and build included.
LAB_TIMEOUT_MIN = 10


def step_id(lab: str) -> str:
    """A step id for a lab: ``lab-3-1``."""
    return "lab-" + lab.replace(".", "-")


def lab_command(lab: str) -> str:
    """The command a lab's test runs in the student's repository."""
    return f"pi-conformance check . --lab {lab}"


def _quoted(text: str) -> str:
    """A YAML scalar: JSON strings are valid YAML flow scalars."""
    return json.dumps(text)


def workflow(rubric: Rubric, install: str | None = None, node_version: str = "22", python_version: str = "3.12") -> str:
    """The text of ``classroom.yml`` for ``rubric``'s labs; ``install`` is what pip installs (default: this version)."""
    package = install or f"pi-conformance=={__version__}"
    lines = [
        f"# GitHub Classroom autograding, written by `pi-conformance autograder github-classroom` (pi-conformance {__version__}).",
        "# One test per lab: `pi-conformance check . --lab LAB` prints the grader's feedback in the run log and",
        "# passes only when the lab is full (public cases only: held-out cases are not part of it).",
        "name: Autograding Tests",
        "on: [push, repository_dispatch]",
        "permissions:",
        "  checks: write",
        "  actions: read",
        "  contents: read",
        "jobs:",
        "  run-autograding-tests:",
        "    runs-on: ubuntu-latest",
        "    if: github.actor != 'github-classroom[bot]'",
        "    steps:",
        "      - name: Checkout code",
        "        uses: actions/checkout@v4",
        "      - uses: actions/setup-node@v4",
        "        with:",
        f"          node-version: {_quoted(node_version)}",
        "      - uses: actions/setup-python@v5",
        "        with:",
        f"          python-version: {_quoted(python_version)}",
        "      - name: Install pi-conformance and its TypeScript toolchain",
        "        run: |",
        f"          python -m pip install --quiet {package}",
        "          pi-conformance toolchain install",
    ]
    ids = []
    for lab, rule in rubric.labs.items():
        ids.append(step_id(lab))
        lines += [
            f"      - name: {_quoted(f'lab {lab}')}",
            f"        id: {step_id(lab)}",
            "        uses: classroom-resources/autograding-command-grader@v1",
            "        with:",
            f"          test-name: {_quoted(f'lab {lab}')}",
            "          setup-command: ''",
            f"          command: {_quoted(lab_command(lab))}",
            f"          timeout: {LAB_TIMEOUT_MIN}",
            f"          max-score: {rule.weight:g}",
        ]
    lines += [
        "      - name: Autograding Reporter",
        "        uses: classroom-resources/autograding-grading-reporter@v1",
        "        env:",
        *(f'          {step.upper()}_RESULTS: "${{{{steps.{step}.outputs.result}}}}"' for step in ids),
        "        with:",
        f"          runners: {','.join(ids)}",
    ]
    return "\n".join(lines) + "\n"


def write_workflow(out: Path, rubric: Rubric, install: str | None = None) -> Path:
    """Write ``OUT/.github/workflows/classroom.yml``; its path."""
    target = out / WORKFLOW
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(workflow(rubric, install), encoding="utf-8")
    return target
