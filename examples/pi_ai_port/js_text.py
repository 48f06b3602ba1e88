"""What JavaScript strings do that Python's do not: JSON.stringify's text, and lengths and slices in UTF-16 code units.

Upstream measures and cuts text in UTF-16 code units (``text.length``, ``text.slice``): a CJK
character is one unit, an emoji two. A Python ``str`` counts code points, so the port works on
the UTF-16 encoding wherever a length or a cut is observable (chunks, token estimates).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


def stringify(value: Any) -> str:
    """``JSON.stringify(value)`` without indentation, for a JSON value made of dicts, lists, str, numbers, bools and None."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int) and abs(value) <= 2**53:
        return str(value)
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        # Python escapes exactly the characters JavaScript escapes, but leaves a lone surrogate raw.
        return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", json.dumps(value, ensure_ascii=False))
    if isinstance(value, list | tuple):
        return "[" + ",".join(stringify(item) for item in value) + "]"
    return "{" + ",".join(f"{stringify(key)}:{stringify(value[key])}" for key in js_keys(value)) + "}"


def js_keys(mapping: dict[str, Any]) -> list[str]:
    """The keys of ``mapping`` in JavaScript property order: array indices ("0" to "4294967294") ascending, then the rest."""
    indices = sorted((key for key in mapping if _ARRAY_INDEX.fullmatch(key) and int(key) < 2**32 - 1), key=int)
    chosen = set(indices)
    return indices + [key for key in mapping if key not in chosen]


def js_object(mapping: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``mapping`` whose insertion order is JavaScript's property order (what a JavaScript object of it would list)."""
    return {key: mapping[key] for key in js_keys(mapping)}


def _number(value: float) -> str:
    """``Number.prototype.toString``: the shortest round-trip digits, laid out as ECMAScript says."""
    try:
        number = float(value)
    except OverflowError:  # an int too large for a double is Infinity in JavaScript
        return "null"
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    parts = Decimal(repr(abs(number))).normalize().as_tuple()
    digits = "".join(map(str, parts.digits))
    k, n = len(digits), int(parts.exponent) + len(digits)  # number = 0.DIGITS x 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{mantissa}e{'+' if n > 0 else '-'}{abs(n - 1)}"
    return ("-" if number < 0 else "") + text


def utf16_length(text: str) -> int:
    """``text.length`` in JavaScript."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_common_prefix_length(first: str, second: str) -> int:
    """How many leading UTF-16 code units the two texts share."""
    a, b = first.encode("utf-16-le", "surrogatepass"), second.encode("utf-16-le", "surrogatepass")
    index = 0
    while index < min(len(a), len(b)) and a[index] == b[index]:
        index += 1
    return index // 2


def utf16_chunks(text: str, next_size: Callable[[], int]) -> list[str]:
    """``text`` cut into consecutive chunks of ``next_size()`` UTF-16 code units each (the last one is the rest).

    A cut inside a surrogate pair leaves a lone surrogate at each side, as in JavaScript;
    :func:`concat` joins such halves again.
    """
    units = text.encode("utf-16-le", "surrogatepass")
    chunks: list[str] = []
    index = 0
    while index < len(units):
        size = 2 * next_size()
        chunks.append(units[index : index + size].decode("utf-16-le", "surrogatepass"))
        index += size
    return chunks


def concat(first: str, second: str) -> str:
    """``first + second`` as JavaScript does it: two halves of a surrogate pair become one character again."""
    return (first + second).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
