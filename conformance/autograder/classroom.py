"""The GitHub Classroom workflow a course puts in its template repository: one test per lab, with its points.

GitHub Classroom's autograding runs ``.github/workflows/classroom.yml`` in each student's
repository on every push. Each lab is one ``classroom-resources/autograding-command-grader@v1``
step whose command is ``pi-conformance check . --lab LAB``: it prints the grader's feedback
into the run log and exits 0 only when the lab is full, so the step earns the lab's points
(the rubric's weight) or none; ``autograding-grading-reporter@v1`` adds them up.

The workflow sits in every student's repository, where they can read it: it checks the
public cases only, and a held-out set has no place in it (grade those with ``grade-batch``
or the Gradescope autograder).

No package index holds pi-conformance, so the template carries it: this version's wheel and
the toolchain lock go into ``.github/pi-conformance/`` (:data:`CARRIED`), the workflow installs
that file, and the students' own pre-check (:func:`precheck_command`) runs the same wheel.
``--install SPEC`` replaces the carried wheel with what staff host (a wheel URL). The wheel's
dependencies and the TypeScript toolchain still come from PyPI and npm, as usual.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from conformance import __version__
from conformance.autograder.wheel import obtain_wheel
from conformance.grading.rubric import Rubric
from conformance.toolchain import LOCK_FOLDER
from conformance.toolchain.node_versions import INSTALL_MAJOR

WORKFLOW = Path(".github") / "workflows" / "classroom.yml"
#: The folder of the template that carries pi-conformance's wheel and the toolchain lock.
CARRIED = Path(".github") / "pi-conformance"
_LOCK_FILES = ("package.json", "package-lock.json")
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


def precheck_command(install: str) -> str:
    """What a student runs in their repository to check it as the workflow will (pipx, with the same wheel)."""
    return f"pipx run --spec {shlex.quote(install)} pi-conformance check ."


def workflow(rubric: Rubric, install: str, node_version: str = str(INSTALL_MAJOR), python_version: str = "3.12") -> str:
    """The text of ``classroom.yml`` for ``rubric``'s labs; ``install`` is what pip installs (the carried wheel's path, or a URL)."""
    lock = (CARRIED / "toolchain" / "package-lock.json").as_posix()
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
        "          cache: npm",  # the toolchain's npm downloads, keyed by the carried lock
        f"          cache-dependency-path: {lock}",
        "      - uses: actions/setup-python@v5",
        "        with:",
        f"          python-version: {_quoted(python_version)}",
        "      - name: Install pi-conformance and its TypeScript toolchain",
        "        run: |",
        f"          python -m pip install --quiet {shlex.quote(install)}",
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


@dataclass(frozen=True)
class Template:
    """What went into the template repository."""

    workflow: Path
    #: The wheel carried in the template (None when ``--install`` names one hosted elsewhere).
    wheel: Path | None
    #: What the workflow and the pre-check install: the carried wheel's path in the repository, or the given spec.
    install: str
    #: Bytes written into the template (workflow, wheel, lock, note).
    size: int


def _carry_lock(out: Path) -> None:
    """Copy the toolchain lock (the wheel's own) into the template: the workflow's npm cache is keyed by it."""
    folder = out / CARRIED / "toolchain"
    folder.mkdir(parents=True, exist_ok=True)
    for name in _LOCK_FILES:
        shutil.copyfile(LOCK_FOLDER / name, folder / name)


def _carry_wheel(out: Path, wheel: Path | None) -> Path:
    """Copy this version's wheel (given, built or repacked) into ``OUT/.github/pi-conformance``; its path there."""
    carried = out / CARRIED
    with tempfile.TemporaryDirectory(prefix="pi-classroom-") as work:
        source = obtain_wheel(wheel, Path(work))
        for stale in carried.glob("pi_conformance-*.whl"):  # an older version's wheel must not linger beside it
            stale.unlink()
        return Path(shutil.copyfile(source, carried / source.name))


def _note(install: str) -> str:
    return (
        f"# pi-conformance {__version__}, carried by this template\n\n"
        f"`.github/workflows/classroom.yml` installs it from here and checks each lab on every push.\n"
        f"Check your work before you push, from the repository's folder (needs Python 3.11+, pipx and Node.js):\n\n"
        f"    {precheck_command(install)}\n\n"
        "Only the public cases are checked; the grade may include cases that are held out.\n"
    )


def write_template(out: Path, rubric: Rubric, install: str | None = None, wheel: Path | None = None) -> Template:
    """Write the workflow, the carried wheel (unless ``install`` names one) and the toolchain lock into ``out``."""
    _carry_lock(out)
    carried_wheel = None if install else _carry_wheel(out, wheel)
    spec = f"./{(CARRIED / carried_wheel.name).as_posix()}" if carried_wheel is not None else str(install)
    (out / CARRIED / "README.md").write_text(_note(spec), encoding="utf-8")
    target = out / WORKFLOW
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(workflow(rubric, spec), encoding="utf-8")
    size = sum(path.stat().st_size for path in [target, *(out / CARRIED).rglob("*")] if path.is_file())
    return Template(target, carried_wheel, spec, size)
