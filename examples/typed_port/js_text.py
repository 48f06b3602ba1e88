"""The text JavaScript's JSON.stringify writes for a JSON value (number layout, key order, escapes)."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def stringify(value: Any) -> str:
    if value is None or value is True or value is False:
        return json.dumps(value)
    if isinstance(value, int) and abs(value) < 2**53:
        return str(value)
    if isinstance(value, int | float):
        try:
            return _number(float(value))
        except OverflowError:
            return "null"
    if isinstance(value, str):
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))
    if isinstance(value, list):
        return "[" + ",".join(stringify(item) for item in value) + "]"
    indices = sorted((k for k in value if k.isascii() and k.isdigit() and (k == "0" or k[0] != "0") and int(k) <= 2**32 - 2), key=int)
    keys = indices + [k for k in value if k not in indices]
    return "{" + ",".join(stringify(k) + ":" + stringify(value[k]) for k in keys) + "}"


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    parts = Decimal(repr(abs(value))).normalize().as_tuple()
    digits, k = "".join(map(str, parts.digits)), len(parts.digits)
    n = int(parts.exponent) + k
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + f"e{'+' if n > 0 else '-'}{abs(n - 1)}"
    return ("-" if value < 0 else "") + body
