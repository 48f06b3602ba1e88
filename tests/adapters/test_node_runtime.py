"""The Node.js versions the adapters run on, and how each spells the permission model (issue 32)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters.node_runtime import UnsupportedNode, check_supported, isolation_flags, parse_version, permission_switch


@pytest.mark.parametrize(
    ("version", "switch"),
    [
        ("v20.0.0", "--experimental-permission"),
        ("v20.20.2", "--experimental-permission"),
        ("v22.19.0", "--permission"),
        ("v24.11.1", "--permission"),
        ("v18.20.4", None),
        ("v21.7.3", None),
        ("v22.18.0", None),
    ],
)
def test_each_version_gets_its_own_switch_or_none(version: str, switch: str | None) -> None:
    parsed = parse_version(version)
    assert parsed is not None
    assert permission_switch(parsed) == switch


@pytest.mark.parametrize("text", ["v18.20.4", "v22.18.0", "v21.0.0", "", "not a version"])
def test_an_unsupported_node_is_refused_in_one_line_naming_what_was_found(text: str) -> None:
    with pytest.raises(UnsupportedNode) as raised:
        check_supported(text, "pi-course")
    message = str(raised.value)
    assert "\n" not in message
    assert "Node.js 20.x or 22.19+" in message
    assert message.endswith(text or "an unknown version")


def test_the_flags_grant_reads_one_path_each_and_nothing_more() -> None:
    flags = isolation_flags((22, 19, 0), [Path("/a"), Path("/b"), Path("/a")])
    assert flags[0] == "--permission"
    assert [flag for flag in flags if flag.startswith("--allow-")] == ["--allow-fs-read=/a", "--allow-fs-read=/b"]
    assert "--frozen-intrinsics" in flags
    assert isolation_flags((20, 20, 2), [])[0] == "--experimental-permission"
    with pytest.raises(UnsupportedNode):
        isolation_flags((21, 1, 0), [])
