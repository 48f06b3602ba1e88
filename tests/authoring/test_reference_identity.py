"""Only the profile's own reference is "the reference": for pi-ai-1, upstream's package at the version the profile was read from.

An old version, a fork or a patched copy that fails a case is an implementation failing it:
"[check the case]" would send its porter to doubt a case upstream passes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.adapters.kinds import parse_impl
from conformance.model.profiles import PI_AI_1
from tests.support.cli_runner import cli
from tests.support.paths import REPO
from tests.support.requirements import needs_node
from tests.support.suspect_cases import UPSTREAM, VERSION, package


def test_the_profile_names_the_version_its_spec_says_it_was_read_from() -> None:
    line = re.search(r"^Profile version: .*\(read from `(.+)` (\S+)\)$", (REPO / PI_AI_1.spec).read_text(encoding="utf-8"), re.M)
    assert line is not None and (line[1], line[2]) == PI_AI_1.reference_package == (UPSTREAM, VERSION)


def test_only_upstream_at_the_profiles_version_is_the_reference(tmp_path: Path) -> None:
    assert parse_impl(f"pi-ai:{package(tmp_path / 'upstream')}").is_reference(PI_AI_1.name)
    installed = package(tmp_path / "prefix" / "node_modules" / UPSTREAM).parents[2]
    assert parse_impl(f"pi-ai:{installed}").is_reference(PI_AI_1.name)
    assert not parse_impl(f"pi-ai:{package(tmp_path / 'old', version='1.5.0')}").is_reference(PI_AI_1.name)
    assert not parse_impl(f"pi-ai:{package(tmp_path / 'fork', name='@fork/pi-ai')}").is_reference(PI_AI_1.name)
    fork_installed = package(tmp_path / "forks" / "node_modules" / "@fork" / "pi-ai", name="@fork/pi-ai").parents[2]
    assert not parse_impl(f"pi-ai:{fork_installed}?package=@fork/pi-ai").is_reference(PI_AI_1.name)
    assert not parse_impl(f"pi-ai:{tmp_path / 'missing'}").is_reference(PI_AI_1.name)
    assert not parse_impl(f"pi-ai:{package(tmp_path / 'upstream')}").is_reference("course")


@needs_node
@pytest.mark.parametrize(
    ("name", "version", "suspected"), [(UPSTREAM, VERSION, True), (UPSTREAM, "1.5.0", False), ("@fork/pi-ai", VERSION, False)]
)
def test_check_the_case_is_printed_only_for_the_reference(tmp_path: Path, name: str, version: str, suspected: bool) -> None:
    folder = package(tmp_path / "pkg", name, version)
    result = cli("run", "--profile", "pi-ai-1", "--impl", f"pi-ai:{folder}", "--sandbox", "none", "-k", "pa-content-text", timeout=180)
    assert result.returncode == 1 and "failed" in result.stdout, result.stdout + result.stderr
    assert ("[check the case] the reference (pi-ai:" in result.stdout) is suspected, result.stdout
