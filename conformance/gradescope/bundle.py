"""The zip Gradescope takes: ``setup.sh``, ``run_autograder``, this package's wheel, the rubric and held-out set.

Gradescope unpacks the zip into ``/autograder/source``, runs ``setup.sh`` there once (as root)
to build the image, then ``run_autograder`` for each submission (``/autograder/submission``),
and reads ``/autograder/results/results.json``. What the two scripts do is said at their top
(``setup.sh``, ``run_autograder.sh`` beside this module).

The rubric and held-out set are checked here, against the fixtures of this very version,
so a typo fails on the staff's machine and not on every student's submission.
"""

from __future__ import annotations

import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from conformance import __version__
from conformance.adapters.kinds import submission_kind
from conformance.autograder.wheel import obtain_wheel
from conformance.loading.loader import FIXTURE_SUFFIXES, fixture_files
from conformance.toolchain import node_versions

HERE = Path(__file__).resolve().parent
SETUP = HERE / "setup.sh"
RUN = HERE / "run_autograder.sh"
_EXECUTABLE = stat.S_IFREG | 0o755
_READABLE = stat.S_IFREG | 0o644


@dataclass(frozen=True)
class Bundle:
    """What went into the zip."""

    path: Path
    wheel: str
    rubric: bool
    held_out_files: int
    size: int


def script(template: Path, profile: str, wheel: str) -> str:
    """A script's text with this bundle's values filled in."""
    values = {
        "@VERSION@": __version__,
        "@NODE_MINIMUM_MAJOR@": str(node_versions.MINIMUM_MAJOR),
        "@NODE_COURSE_FLOOR@": node_versions.floor_text(),
        "@NODE_INSTALL_MAJOR@": str(node_versions.INSTALL_MAJOR),
        "@PROFILE@": profile,
        "@IMPL_KIND@": submission_kind(profile).name,
        "@WHEEL@": wheel,
    }
    text = template.read_text(encoding="utf-8")
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


def check_inputs(rubric: Path | None, held_out: Path | None, profile: str) -> None:
    """Grade nothing, but load the rubric and held-out set as ``run_autograder`` will (:class:`RubricError` if wrong)."""
    from conformance.grading.grader import prepare
    from conformance.grading.rubric import load_rubric

    prepare(load_rubric(rubric, profile), held_out=held_out)


def _add(archive: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def write_bundle(out: Path, profile: str, rubric: Path | None = None, held_out: Path | None = None, wheel: Path | None = None) -> Bundle:
    """Write the autograder zip to ``out`` (checked inputs; a wheel of this version, built when none is given)."""
    check_inputs(rubric, held_out, profile)
    held_files = [path for path in fixture_files(held_out) if path.suffix in FIXTURE_SUFFIXES] if held_out else []
    with tempfile.TemporaryDirectory(prefix="pi-autograder-") as work:
        wheel_path = obtain_wheel(wheel, Path(work))
        partial = out.with_name(out.name + ".partial")
        with zipfile.ZipFile(partial, "w") as archive:
            _add(archive, "setup.sh", script(SETUP, profile, wheel_path.name).encode(), _EXECUTABLE)
            _add(archive, "run_autograder", script(RUN, profile, wheel_path.name).encode(), _EXECUTABLE)
            _add(archive, wheel_path.name, wheel_path.read_bytes(), _READABLE)
            if rubric is not None:
                _add(archive, "rubric.yaml", rubric.read_bytes(), _READABLE)
            for path in held_files:
                assert held_out is not None
                _add(archive, f"held-out/{path.relative_to(held_out).as_posix()}", path.read_bytes(), _READABLE)
        partial.replace(out)
    return Bundle(out, wheel_path.name, rubric is not None, len(held_files), out.stat().st_size)
