"""How the suite writes a place inside a JSON value: ``steps[2].events[1].partial.content[0].text``.

Loading (a problem's path in a fixture), YAML node positions and judging (a divergence's path)
all spell paths this one way, so a path printed by one can be looked up by another.
"""

from __future__ import annotations

import json
import re

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def join_key(path: str, key: str) -> str:
    """Append an object key to a path, bracketed when it is not a plain identifier."""
    if _IDENTIFIER.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def join_index(path: str, index: int) -> str:
    """Append an array index to a path."""
    return f"{path}[{index}]"
