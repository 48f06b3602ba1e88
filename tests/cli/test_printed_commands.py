"""Commands as printed run (issue 33, item 8): one documented way puts ``pi-conformance`` on PATH.

The README's quick start, the manual and every "next" line the CLI prints write commands as
``pi-conformance ...``. In a checkout, ``make conformance`` creates ``.venv`` and ends by naming
the one way to run them as printed, ``source .venv/bin/activate``; these tests hold each part
of that to the others.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

ACTIVATE = "source .venv/bin/activate"
MANUAL = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "spec").rglob("*.md"))]


def test_the_quick_start_is_on_the_first_screen_of_a_short_readme() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; the manual (docs/) is the place for more"
    first_screen = "\n".join(lines[:24])
    for command in ("make conformance", "make test", ACTIVATE):
        assert command in first_screen, f"README.md: {command!r} is not in its first 24 lines"


def test_make_conformance_ends_by_naming_the_way_to_run_printed_commands() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    target = makefile.split("\nconformance:", 1)[1].split("\n\n", 1)[0]
    assert f"next: {ACTIVATE.replace('.venv', '$(VENV)')}" in target


def test_no_page_of_the_manual_writes_the_cli_by_its_venv_path() -> None:
    # One way to run commands, not two: a page that writes .venv/bin/pi-conformance teaches another.
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in MANUAL
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"(\.venv|venv)/bin/pi-conformance", line)
    ]
    assert offenders == [], "write `pi-conformance ...` (after `source .venv/bin/activate`)"


def test_activating_the_virtualenv_puts_this_pi_conformance_on_path() -> None:
    activate = Path(sys.prefix) / "bin" / "activate"
    if sys.prefix == sys.base_prefix or not activate.is_file():
        pytest.skip(f"the tests do not run in a virtualenv with bin/activate ({sys.prefix})")
    # A PATH without the virtualenv, as in a new terminal: only activate can have put it there.
    script = f'source "{activate}" && command -v pi-conformance && pi-conformance --version'
    result = subprocess.run(["bash", "-c", script], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    where, version = result.stdout.split("\n")[:2]
    assert Path(where) == Path(sys.prefix) / "bin" / "pi-conformance" and version.startswith("pi-conformance ")


def test_the_readmes_student_precheck_names_this_versions_wheel() -> None:
    from conformance import __version__

    # As `autograder github-classroom` writes and prints it (tests/end_to_end/test_classroom_template.py runs it).
    wheel = f"./.github/pi-conformance/pi_conformance-{__version__}-py3-none-any.whl"
    assert f"pipx run --spec {wheel} pi-conformance check ." in (REPO / "README.md").read_text(encoding="utf-8")
