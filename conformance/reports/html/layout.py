# ruff: noqa: E501  (HTML templates read better as one line per element)
"""The page frame every HTML report shares: escaping, the stylesheet, status badges, file names."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from pathlib import Path

from conformance.common.atomic_file import write_text_atomic

#: Status -> (shape, label): status is always said in text and shape, never by colour alone.
BADGES = {
    "passed": ("✓", "passed"),
    "failed": ("✗", "failed"),
    "errored": ("!", "errored"),
    "skipped": ("○", "skipped"),
    "inherited": ("↑", "fails because of an earlier lab"),
    "mixed": ("◐", "some failed"),
}

CSS = """
:root { --fail: #b00020; --pass: #1b5e20; --skip: #555; --mark: #fff3b0; --line: #ccc; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #111; background: #fff; }
main { max-width: 1400px; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
a { color: #0645ad; } a:focus, summary:focus, [tabindex]:focus { outline: 3px solid #1a73e8; outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .3rem; }
nav.crumbs { font-size: .9rem; margin-bottom: .5rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; } th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 13px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .2rem 0; background: #f8f8f8; padding: .4rem; border: 1px solid #eee; }
.badge { display: inline-block; padding: 0 .4rem; border: 1px solid currentColor; border-radius: 3px; font-size: .85rem; white-space: nowrap; }
.s-passed { color: var(--pass); } .s-failed, .s-errored { color: var(--fail); } .s-skipped { color: var(--skip); } .s-inherited { color: #6a4c00; }
.s-mixed { color: #8a4b00; }
section.case { border-top: 2px solid var(--line); margin-top: 1.2rem; padding-top: .5rem; }
.case-grid { display: grid; grid-template-columns: minmax(0, 1fr); gap: .5rem; }
.note { border-left: 4px solid var(--fail); padding-left: .5rem; }
aside.why { background: #fafafa; border-left: 4px solid var(--line); padding: .3rem .8rem; }
table.trace { width: 100%; table-layout: fixed; } table.trace td:first-child, table.trace th:first-child { width: 5.5rem; }
tr.diverged td { background: var(--mark); border-top: 3px solid #000; border-bottom: 3px solid #000; }
mark.field { background: #ffd54f; outline: 2px dashed #000; padding: 0 .15rem; }
.divergence { font-weight: 600; }
.muted { color: #555; } .small { font-size: .85rem; }
svg text { font: 11px system-ui, sans-serif; }
.matrix td a { text-decoration: none; display: block; } .matrix th.rot { white-space: nowrap; }
ul.cases { columns: 2; } @media (max-width: 900px) { ul.cases { columns: 1; } }
"""


def e(value: object) -> str:
    """Escape any value for HTML text and attribute values."""
    return html.escape(str(value), quote=True)


def pretty(value: object) -> str:
    """A JSON value as indented text (non-ASCII kept), escaped."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return e(text)


def compact(value: object, limit: int = 160) -> str:
    """A JSON value on one line, cut at ``limit`` characters, escaped."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return e(text if len(text) <= limit else text[: limit - 1] + "…")


def badge(status: str, label: str | None = None) -> str:
    """A status as shape and text (colour only adds to it)."""
    shape, text = BADGES.get(status, ("?", status))
    return f'<span class="badge s-{e(status)}">{shape} {e(label or text)}</span>'


def anchor(case_id: str) -> str:
    """The fragment id of a case's section."""
    return "case-" + re.sub(r"[^A-Za-z0-9_-]", "_", case_id)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def slugs(names: Iterable[str], prefix: str = "") -> dict[str, str]:
    """A distinct, file-system- and URL-safe file name (``.html``) for each name."""
    taken: set[str] = set()
    out: dict[str, str] = {}
    for name in names:
        base = prefix + (_UNSAFE.sub("_", name).strip("._") or "x")[:80]
        slug, number = base, 2
        while slug.lower() in taken:
            slug, number = f"{base}-{number}", number + 1
        taken.add(slug.lower())
        out[name] = slug + ".html"
    return out


def page(title: str, body: str, crumbs: Iterable[tuple[str, str | None]] = ()) -> str:
    """A whole HTML document: ``crumbs`` are (label, href or None for the current page)."""
    trail = " &rsaquo; ".join(
        f'<a href="{e(href)}">{e(label)}</a>' if href else f'<span aria-current="page">{e(label)}</span>' for label, href in crumbs
    )
    nav = f'<nav class="crumbs" aria-label="breadcrumb">{trail}</nav>' if trail else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        '<a class="skip" href="#main">Skip to content</a>\n'
        f'<main id="main" tabindex="-1">\n{nav}\n{body}\n</main>\n</body>\n</html>\n'
    )


def write_page(folder: Path, name: str, text: str) -> Path:
    """Write one page atomically; its path."""
    path = folder / name
    write_text_atomic(path, text)
    return path
