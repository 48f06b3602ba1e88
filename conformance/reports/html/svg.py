# ruff: noqa: E501  (HTML templates read better as one line per element)
"""Charts as inline SVG, drawn here (no library): a histogram of scores.

Each chart carries a text equivalent (``role="img"`` with an ``aria-label`` and a
``<title>`` per bar), so it reads without colour and without sight.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.reports.html.layout import e


def bins(values: Sequence[float], maximum: float, count: int = 10) -> list[int]:
    """How many values fall in each of ``count`` equal bins over [0, maximum] (the top bin includes the maximum)."""
    counts = [0] * count
    for value in values:
        fraction = value / maximum if maximum > 0 else 0.0
        index = min(count - 1, max(0, int(fraction * count)))
        counts[index] += 1
    return counts


def histogram(values: Sequence[float], maximum: float, label: str, count: int = 10, width: int = 320, height: int = 140) -> str:
    """A histogram of ``values`` over [0, maximum] as an ``<svg>`` element."""
    counts = bins(values, maximum, count)
    top = max(counts) or 1
    left, bottom, plot_h = 24, 22, height - 40
    bar_w = (width - left - 4) / count
    parts = []
    described = []
    for index, number in enumerate(counts):
        low, high = maximum * index / count, maximum * (index + 1) / count
        bar_h = plot_h * number / top
        x = left + index * bar_w
        y = height - bottom - bar_h
        span = f"{low:g} to {high:g}"
        described.append(f"{span}: {number}")
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{bar_h:.1f}" fill="#4a6fa5" stroke="#000" stroke-width="0.5">'
            f"<title>{e(span)}: {number} submission{'s' if number != 1 else ''}</title></rect>"
        )
        if number:
            parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle">{number}</text>')
    axis = height - bottom
    parts.append(f'<line x1="{left}" y1="{axis}" x2="{width - 4}" y2="{axis}" stroke="#000"/>')
    for index in (0, count // 2, count):
        x = left + index * bar_w
        align = "start" if index == 0 else "end" if index == count else "middle"
        parts.append(f'<text x="{x:.1f}" y="{axis + 14}" text-anchor="{align}">{maximum * index / count:g}</text>')
    aria = f"{label}: " + ", ".join(described)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{e(aria)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><title>{e(aria)}</title>{"".join(parts)}</svg>'
    )
