"""Which chapter of the course a course project is at, read from the modules it has (docs/grading.md, "The chapter a repository is at").

The course adds one module per chapter that pi-conformance checks: chapter 03 writes
``src/types.ts``, chapter 04 ``src/scripted-model.ts``, chapter 05 ``src/provider-adapter.ts``,
chapter 06 ``src/tool.ts``, chapter 07 ``src/agent-loop.ts``, chapter 09 ``src/agent.ts`` (the
course's ``npm run practice -- 06`` copies the chapter's starter there). A project is at the
latest chapter whose module it has, as TypeScript source or compiled (``dist/src/*.js``).

Chapters 03 and 04 are the course's first assignment and are always graded (a missing module
there is partial credit, as before). A later chapter counts once its module exists, even as
the untouched starter: the student has started it, and its unfinished labs are skipped cases
that earn nothing, as chapters 03/04's placeholders are. Only the files' existence and text are
read here; nothing of the project runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from conformance.adapters.pi_course import modules_dir, package_dir

#: The chapters that are always graded: the course's first assignment.
ALWAYS_GRADED = "04"
#: The later chapters, newest first, and the module each one adds.
LATER_CHAPTERS = (("09", "agent"), ("07", "agent-loop"), ("06", "tool"), ("05", "provider-adapter"))
#: A placeholder's throw, as the course's starters write it ("Lab 6.1 stringValue 尚未实现", "Lab 5.1 toProviderMessages 尚未实现")
#: or as chapters 03/04's labs do ("not implemented in lab 3.1").
_PLACEHOLDER = re.compile(r"尚未实现|not implemented", re.IGNORECASE)
#: More text than any chapter module has: a bigger file is not read for placeholders.
_READ_LIMIT = 1_000_000


@dataclass(frozen=True)
class DetectedChapter:
    """The chapter a project is at, and why (one clause, naming the file that decided it)."""

    chapter: str
    reason: str


def _found(project: Path, module: str) -> Path | None:
    """The project's source of ``module`` (``src/<module>.ts``), else its compiled form, else None."""
    for candidate in (package_dir(project) / "src" / f"{module}.ts", modules_dir(project) / f"{module}.js"):
        if candidate.is_file():
            return candidate
    return None


def _shown(path: Path, project: Path) -> str:
    """``path`` as a student names it: relative to the package folder when it is inside it."""
    for root in (package_dir(project), project):
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            continue
    return path.name


def _has_placeholders(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            text = handle.read(_READ_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return False
    return _PLACEHOLDER.search(text) is not None


def detect_chapter(project: Path) -> DetectedChapter:
    """The chapter the course project at ``project`` is at (see the module's docstring)."""
    for chapter, module in LATER_CHAPTERS:
        found = _found(project, module)
        if found is None:
            continue
        shown = _shown(found, project)
        pending = (
            " (it still throws a lab's placeholder error: those labs' cases are skipped and earn nothing)"
            if _has_placeholders(found)
            else ""
        )
        return DetectedChapter(chapter, f"{shown} exists{pending}")
    # Oldest first: "there is no src/tool.ts or src/agent.ts (nor their compiled .js)".
    missing = " or ".join(f"src/{module}.ts" for _, module in reversed(LATER_CHAPTERS))
    their = "its" if len(LATER_CHAPTERS) == 1 else "their"
    return DetectedChapter(ALWAYS_GRADED, f"there is no {missing} (nor {their} compiled .js): chapters 03 and 04 are graded")
