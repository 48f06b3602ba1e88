"""Checks of generated HTML pages: a site is self-contained and its links resolve; which trace row is highlighted."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path


class Links(HTMLParser):
    """Every href, every id, and every element that could load something."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()
        self.loads: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        if tag == "a" and values.get("href"):
            self.hrefs.append(str(values["href"]))
        if tag == "script":
            self.scripts += 1
        for key in ("src", "srcset"):
            if values.get(key):
                self.loads.append(str(values[key]))
        if tag == "link":
            self.loads.append(str(values.get("href")))


def parse(path: Path) -> Links:
    """The links, ids and loads of one HTML file."""
    links = Links()
    links.feed(path.read_text(encoding="utf-8"))
    return links


def check_site(folder: Path) -> None:
    """Self-contained (nothing loaded, no script) and every link resolves, fragment included."""
    parsed = {path.name: parse(path) for path in folder.glob("*.html")}
    problems = []
    for name, links in parsed.items():
        if links.loads or links.scripts:
            problems.append(f"{name}: loads {links.loads} / {links.scripts} scripts")
        for href in links.hrefs:
            target, _, fragment = href.partition("#")
            target = target or name
            if "/" in target or ":" in target or target not in parsed:
                problems.append(f"{name}: link {href} leaves the site or names no page")
            elif fragment and fragment not in parsed[target].ids:
                problems.append(f"{name}: link {href} names no element")
    assert problems == []


def diverged_rows(text: str) -> dict[str, int]:
    """Case section id -> the data-index of its highlighted trace row."""
    rows = {}
    for match in re.finditer(r'<tr class="diverged" id="(?P<id>[^"]+)-diff" data-index="(?P<index>\d+)"', text):
        rows[match["id"]] = int(match["index"])
    return rows
