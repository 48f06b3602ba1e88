"""A fixture file YAML cannot parse is explained for its author: line, column, and the usual mistake behind it (issue 38)."""

from __future__ import annotations

import pytest
import yaml

from conformance.loading.yaml_errors import describe

# Each a fixture author's slip, the line and column PyYAML stops at, and the cause it is explained by.
SLIPS = {
    "apostrophe in a single-quoted hint": (
        "cases:\n  - id: a\n    hint:\n      - 'it's wrong'\n    lab: \"3.1\"\n",
        (4, 13),
        "an apostrophe inside a single-quoted string ends the string; write it twice ('') or use double quotes",
    ),
    "double quote in a double-quoted description": (
        'cases:\n  - id: a\n    description: "say "hi" now"\n',
        (3, 24),
        'a double quote inside a double-quoted string ends the string; write it as \\" or use single quotes',
    ),
    "colon in a plain value": (
        "cases:\n  - id: a\n    description: the key: value thing\n    lab: x\n",
        (3, 25),
        "a colon followed by a space inside an unquoted value; put the whole value in quotes",
    ),
    "a key indented under a value": (
        "cases:\n  - id: a\n    lab: x\n      description: y\n",
        (4, 18),
        "this line is indented deeper than the key above it, which already has a value; line its key up with that key",
    ),
    "a key indented less than its siblings": (
        "cases:\n  - id: a\n    lab: x\n   description: y\n",
        (4, 4),
        "the indentation of this line does not match the lines around it; keys of one mapping start in the same column",
    ),
    "a tab": ("cases:\n  - id: a\n\tlab: x\n", (3, 1), "a tab character; YAML indents with spaces only"),
    "an unclosed list": ("cases:\n  - id: [unclosed\n", (3, 1), "a [ or { that is never closed; close it, or put the text in quotes"),
}


@pytest.mark.parametrize("slip", SLIPS)
def test_each_usual_slip_is_named_at_its_line_and_column(slip: str) -> None:
    text, (line, column), cause = SLIPS[slip]
    with pytest.raises(yaml.YAMLError) as raised:
        yaml.safe_load(text)
    message = describe(raised.value, text)
    assert message.startswith(f"not valid YAML at line {line}, column {column}: ")
    assert message.endswith(f"; likely cause: {cause}")


def test_an_error_no_usual_slip_explains_says_only_what_the_parser_saw() -> None:
    text = "cases:\n  - id: a\n    x: *nowhere\n"
    with pytest.raises(yaml.YAMLError) as raised:
        yaml.safe_load(text)
    assert describe(raised.value, text) == "not valid YAML at line 3, column 8: found undefined alias 'nowhere'"
