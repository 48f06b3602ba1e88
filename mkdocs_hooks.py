"""MkDocs hook: the site holds its pages where the repository holds them.

``docs/`` is MkDocs' docs folder, but the manual also includes files kept elsewhere in the
repository (the README as the home page, the spec, CONTRIBUTING.md). Each page is placed in
the site at its repository path (``docs/grading.md``, ``spec/spec.md``, ``README.md``), so a
relative link is written once and works both on GitHub and in the built site, and
``mkdocs build --strict`` checks every such link and anchor. A page may link a repository
file that is not a page (``../conformance/cli.py``): when the file exists it is copied into
the site as it is, so the link works in both places; when it does not, the build fails.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parent
#: Pages outside docs/ that the manual includes (glob patterns, relative to the repository).
INCLUDED = (
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "spec/*.md",
    "spec/pi-ai-1/*.md",
    "tests/README.md",
)
#: A Markdown link's target, without its #anchor: ``[text](target#anchor)``.
LINK = re.compile(r"\]\(([^()\s#]+)(?:#[^()\s]*)?\)")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Every docs/ file moved under ``docs/`` in the site, plus the included repository files."""
    docs_dir = Path(config.docs_dir).resolve()
    prefix = docs_dir.relative_to(REPO).as_posix()

    def repo_file(path: str) -> File:
        return File(path, str(REPO), config.site_dir, config.use_directory_urls)

    theme = [file for file in files if file.src_dir is None or Path(file.src_dir).resolve() != docs_dir]
    pages = [repo_file(f"{prefix}/{file.src_uri}") for file in files if file.src_dir and Path(file.src_dir).resolve() == docs_dir]
    included = [repo_file(path.relative_to(REPO).as_posix()) for pattern in INCLUDED for path in sorted(REPO.glob(pattern))]
    known = {file.src_uri for file in [*pages, *included]}
    linked = [repo_file(path) for path in _linked_repo_files([*pages, *included]) if path not in known]
    return Files([*theme, *pages, *included, *linked])


def _linked_repo_files(pages: list[File]) -> list[str]:
    """The repository files (not Markdown pages) that ``pages`` link to and that exist, in order."""
    found: dict[str, None] = {}
    for page in pages:
        if not page.is_documentation_page():
            continue
        for target in LINK.findall(page.content_string):
            if ":" in target or target.startswith("/"):
                continue  # a URL or an absolute path: not a repository file
            path = posixpath.normpath(posixpath.join(posixpath.dirname(page.src_uri), target))
            if not path.startswith("..") and not path.endswith(".md") and (REPO / path).is_file():
                found[path] = None
    return list(found)
