"""``json_text``: the text JavaScript's ``JSON.stringify`` writes for a JSON value.

It differs from ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` only
where JavaScript's rules differ from Python's:

* Numbers are all doubles in JavaScript and follow ``Number.prototype.toString``:
  ``2.0`` is ``2``, ``1e-7`` is ``1e-7`` (not ``1e-07``), ``0.00001`` stays fixed,
  ``1e21`` is ``1e+21``, ``-0`` is ``0``, NaN and infinities are ``null``. Python's
  ``repr`` already yields the same shortest round-trip digits; only the layout
  around them is redone here. Integers beyond 2**53 are first rounded to a double,
  as JavaScript would have stored them.
* Object keys that are array indices (``"0"``, ``"7"``...) come first, in numeric
  order, because JavaScript objects order them so; other keys keep their order.
* A lone surrogate in a string is written as a ``\\uXXXX`` escape.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from decimal import Decimal

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_SAFE_INTEGER = 2**53 - 1
_MAX_ARRAY_INDEX = 2**32 - 2


def json_text(value: object) -> str:
    """Return ``JSON.stringify(value)`` for a JSON-like Python value.

    Accepts ``None``, ``bool``, ``int``, ``float``, ``str``, lists and tuples, and
    mappings with ``str`` keys; anything else raises ``TypeError``.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) <= _MAX_SAFE_INTEGER:
            return str(value)
        try:
            return _number_text(float(value))
        except OverflowError:  # JavaScript would have stored Infinity
            return "null"
    if isinstance(value, float):
        return _number_text(value)
    if isinstance(value, str):
        return _string_text(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(json_text(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return _object_text(value)
    raise TypeError(f"not a JSON value: {value!r}")


def _object_text(value: Mapping[object, object]) -> str:
    keys: list[str] = []
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"object key must be a string, not {key!r}")
        keys.append(key)
    # JavaScript lists array-index keys first, ascending; the rest keep their order.
    indices = sorted((key for key in keys if _is_array_index(key)), key=int)
    ordered = indices + [key for key in keys if not _is_array_index(key)]
    members = (_string_text(key) + ":" + json_text(value[key]) for key in ordered)
    return "{" + ",".join(members) + "}"


def _string_text(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or not key.startswith("0")) and int(key) <= _MAX_ARRAY_INDEX


def _number_text(value: float) -> str:
    """Lay out ``repr``'s shortest digits as ``Number::toString`` does (ECMA-262)."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"  # also for -0.0
    sign = "-" if value < 0 else ""
    parts = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, parts.digits))
    assert isinstance(parts.exponent, int)  # finite, so never "n", "N" or "F"
    k = len(digits)
    n = parts.exponent + k  # the value is 0.<digits> * 10**n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        exponent = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"
    return sign + body
