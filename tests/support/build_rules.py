"""Build rules for tests whose subject is what a build script may do (disk, files, processes, secrets).

By default the grader pins the course's ``package.json`` and runs its own ``tsc``, so a
submission's build script never runs (``conformance.isolation.staff_build``). Tests of the
sandbox around a build still need a script to run: they build the submission's own, with
nothing pinned, which is what ``build: {command: npm-run-build, pin: {}}`` asks for.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conformance.adapters.settings import ImplSettings
from conformance.grading.rubric import DEFAULT_RUBRIC
from conformance.isolation.staff_build import StaffBuild

#: The submission's own ``npm run build``, nothing pinned.
OWN_SCRIPT = StaffBuild((), "npm-run-build")
OWN_SCRIPT_RULE = "build: {command: npm-run-build, pin: {}}\n"


def own_script(settings: ImplSettings) -> ImplSettings:
    """``settings`` that build with the submission's own script."""
    return replace(settings, staff_build=OWN_SCRIPT)


def own_script_rubric(folder: Path) -> Path:
    """The default rubric plus :data:`OWN_SCRIPT_RULE`, written in ``folder``: for ``--rubric``."""
    path = folder / "own-script-rubric.yaml"
    path.write_text(DEFAULT_RUBRIC.read_text(encoding="utf-8") + OWN_SCRIPT_RULE, encoding="utf-8")
    return path


def counting_toolchain(folder: Path, log: Path) -> Path:
    """A stand-in for the pinned toolchain whose ``tsc`` appends ``B`` to ``log`` and succeeds: to count builds.

    Point ``PI_CONFORMANCE_TOOLCHAIN`` at the returned folder. It passes the toolchain's
    checks (the lock's stamp, ``tsc``, the two packages' manifests) and compiles nothing.
    """
    from conformance import toolchain

    modules = folder / "node_modules"
    compiler = modules / "typescript" / "bin" / "tsc"
    compiler.parent.mkdir(parents=True)
    compiler.write_text(f"require('fs').appendFileSync({str(log)!r}, 'B');\n", encoding="utf-8")
    for name in toolchain.PACKAGES:
        (modules / name).mkdir(parents=True, exist_ok=True)
        (modules / name / "package.json").write_text('{"version": "0.0.0-counting"}', encoding="utf-8")
    (modules / ".bin").mkdir()
    (modules / ".bin" / "tsc").symlink_to(compiler)
    (folder / toolchain.STAMP).write_text(toolchain.lock_id() + "\n", encoding="utf-8")
    return folder
