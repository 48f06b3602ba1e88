"""``grade-batch --html`` on the session's graded class (``tests/support/graded_class.py``), checked as files and in a browser.

The class (``tests/support/grading_batch.py``) has correct copies, one submission per known bug,
and misbehaving ones (a failed build, hangs, a crash, no project). The site must show each
bug as a failure group of its student, highlight the first differing event of every trace,
and load in headless Chromium (Debian's ``chromium``, driven by Playwright, never a
downloaded browser) with no console error and every link resolving. Screenshots of the
overview and of one trace diff go to the test's folder, and to ``docs/`` with
``PI_UPDATE_SCREENSHOTS=1`` (docs/html-reports.md shows those).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.reports.html.layout import anchor
from tests.support.graded_class import GradedClass
from tests.support.grading_batch import BROKEN
from tests.support.html_pages import check_site, diverged_rows
from tests.support.paths import REPO
from tests.support.requirements import CHROMIUM, needs_chromium, needs_node, require

pytestmark = needs_node

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: One-bug variant -> the divergence pattern of the largest failure group on its page: its bug.
BUG_PATTERN = {
    "textof-tool-names": "text_of value: ",
    "replay-last-timestamp": "current_system_message value.timestamp: ",
    "replay-tombstones": "current_system_message section_order: ",
    "error-needs-end": "steps[*].finished: ",
    "result-is-a-copy": "steps[*].same_object_as: ",
    "requests-by-reference": "steps[*].requests[*].messages: ",
    "shared-partial": "steps[*].events[*].partial.content: ",
    "exhaustion-throws": "steps[*].threw: threw",
    "abort-checked-early": 'steps[*].events[*].type: expected "error", got "start"',
    "production-not-deferred": 'steps[*].events[*].type: expected "error", got "start"',
}
SHARED_CASE = "sm-text-three-blocks-partials-not-shared"


class Site:
    def __init__(self, root: Path, stdout: str, wall_s: float) -> None:
        self.root = root
        self.folder = root / "site"
        self.submissions = sorted(path.name for path in (root / "submissions").iterdir() if not path.name.startswith("."))
        self.stdout = stdout
        self.wall_s = wall_s
        match = re.search(r"html site: (\d+) pages, (\d+) KiB, in ([\d.]+) s", stdout)
        assert match, stdout
        self.pages, self.kib, self.build_s = int(match[1]), int(match[2]), float(match[3])

    def page(self, name: str) -> str:
        return (self.folder / f"s-{name}.html").read_text(encoding="utf-8")

    def report(self, name: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.root / "out" / "reports" / name / "report.json").read_text(encoding="utf-8"))
        return data


@pytest.fixture(scope="module")
def site(graded_class: GradedClass) -> Site:
    result = graded_class.result
    assert result.returncode == 1, result.stderr[-3000:]
    built = Site(graded_class.root, result.stdout, graded_class.wall_s)
    stats = {"pages": built.pages, "kib": built.kib, "build_s": built.build_s, "wall_s": graded_class.wall_s}
    (graded_class.root / "site-stats.json").write_text(json.dumps(stats))
    return built


def test_one_page_per_submission_and_a_small_fast_build(site: Site) -> None:
    assert site.pages == len(site.submissions) + 1 and (site.folder / "index.html").is_file()
    assert site.kib < 40 * 1024, f"the site of {len(site.submissions)} students is {site.kib} KiB"
    assert site.build_s < 0.2 * site.wall_s, f"building the site took {site.build_s} s of {site.wall_s:.0f} s"
    check_site(site.folder)


def test_each_bug_is_its_students_largest_failure_group_and_on_the_overview(site: Site) -> None:
    overview = (site.folder / "index.html").read_text(encoding="utf-8")
    groups = overview[overview.index('id="groups"') : overview.index('id="submissions"')]
    for name, pattern in BUG_PATTERN.items():
        page = site.page(name)
        first = re.search(r'<section id="group-1"><h3>\[1\][^<]*(?:<[^>]+>[^<]*)*?<code>(?P<pattern>[^<]+)</code></h3>', page)
        assert first is not None and html.unescape(first["pattern"]).startswith(pattern), (name, first and first["pattern"])
        assert f'href="s-{name}.html"' in groups, f"{name} is in no failure group of the overview"
    for status in ("build-failed", "timed-out", "crashed", "hung", "not-a-project", "no-cases"):
        assert f"✗ {status}</span>" in overview


def test_the_highlighted_row_is_right_for_every_variant(site: Site) -> None:
    checked = 0
    for name in (*BROKEN, "never-emits", "hangs-in-textof"):
        rows = diverged_rows(site.page(name))
        for case in site.report(name)["cases"]:
            divergence = case.get("divergence") or {}
            match = re.match(r"steps\[\d+\]\.events(?:\[(\d+)\])?", divergence.get("path", ""))
            if case["status"] != "failed" or match is None:
                continue
            assert anchor(case["id"]) in rows, (name, case["id"])
            if match[1] is not None:
                assert rows[anchor(case["id"])] == int(match[1]), (name, case["id"], divergence["path"])
            checked += 1
    assert checked >= 50


def _browser() -> Iterator[Any]:
    require("needs_chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from _browser()


def _open(browser: Any, url: str) -> tuple[Any, list[str]]:
    page, problems = _watched_page(browser)
    page.goto(url)
    return page, problems


def _watched_page(browser: Any) -> tuple[Any, list[str]]:
    """A new page, and the list its console warnings and errors, script errors and non-file requests go to."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on(
        "console",
        lambda message: problems.append(f"console {message.type}: {message.text}") if message.type in ("error", "warning") else None,
    )
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("request", lambda request: problems.append(f"request {request.url}") if not request.url.startswith("file://") else None)
    return page, problems


@needs_chromium
def test_every_page_loads_without_a_console_error_and_its_links_resolve(site: Site, browser: Any) -> None:
    problems = []
    # One tab for every page (a new tab each costs twice the time): each navigation is a new
    # document, and what it reports is taken from the list before the next one.
    page, seen = _watched_page(browser)
    for path in sorted(site.folder.glob("*.html")):
        page.goto(path.as_uri())
        links = page.eval_on_selector_all("a[href]", "links => links.map(link => link.href)")
        problems += [f"{path.name}: {problem}" for problem in seen]
        seen.clear()
        for href in links:
            target, _, fragment = href.partition("#")
            if not target.startswith("file://") or not Path(target[len("file://") :]).is_file():
                problems.append(f"{path.name}: {href} does not resolve")
    page.close()  # delivers what is still on its way
    problems += [f"{path.name} (or an earlier page): {problem}" for problem in seen]
    assert problems == []
    # Following a fragment link lands on its element, in view.
    page, seen = _open(browser, (site.folder / "index.html").as_uri())
    page.click("#groups ~ table a[href*='#case-']")
    fragment = page.evaluate("location.hash").lstrip("#")
    assert fragment and page.locator(f"#{fragment}").is_visible() and page.locator(f"#{fragment}").bounding_box() is not None
    assert seen == []
    page.close()


@needs_chromium
def test_the_trace_diff_highlights_the_first_differing_event_and_field(site: Site, browser: Any) -> None:
    divergence = next(case for case in site.report("shared-partial")["cases"] if case["id"] == SHARED_CASE)["divergence"]
    expected_row = int(re.match(r"steps\[\d+\]\.events\[(\d+)\]\.(\w+)", divergence["path"])[1])  # type: ignore[index]
    page, seen = _open(browser, (site.folder / "s-shared-partial.html").as_uri() + f"#{anchor(SHARED_CASE)}")
    row = page.locator(f"#{anchor(SHARED_CASE)}-diff")
    assert row.get_attribute("data-index") == str(expected_row)
    assert "first difference" in row.inner_text()
    marks = row.locator("mark.field")
    assert marks.count() == 2 and all("partial" in text for text in marks.all_inner_texts())
    assert row.locator("details[open] pre").first.is_visible(), "the differing partial is unfolded"
    section = page.locator(f"#{anchor(SHARED_CASE)}")
    assert "SM-PLAY-3" in section.locator("aside").inner_text()
    shots = site.root / "screenshots"
    shots.mkdir(exist_ok=True)
    section.screenshot(path=str(shots / "html-trace-diff.png"))
    # Keyboard: a folded partial opens with Enter.
    folded = page.locator(f"#{anchor(SHARED_CASE)} tr:not(.diverged) details summary").first
    folded.focus()
    page.keyboard.press("Enter")
    assert folded.locator("xpath=..").get_attribute("open") is not None
    overview, more = _open(browser, (site.folder / "index.html").as_uri())
    overview.screenshot(path=str(shots / "html-class-overview.png"), full_page=True)
    overview.keyboard.press("Tab")  # the first Tab reaches the skip link, the next ones the links
    assert overview.evaluate("document.activeElement.textContent") == "Skip to content"
    overview.keyboard.press("Tab")
    assert overview.evaluate("document.activeElement.tagName") == "A"
    assert seen == [] and more == []
    if os.environ.get("PI_UPDATE_SCREENSHOTS") == "1":
        for name in ("html-trace-diff.png", "html-class-overview.png"):
            shutil.copyfile(shots / name, REPO / "docs" / name)
