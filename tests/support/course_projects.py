"""The course repository's two shapes, materialised from ``tests/support/js/course-ts`` for tests.

``tests/support/js/course-ts`` mirrors the real course repository: a TypeScript monorepo whose root
``package.json`` has the ``workspaces`` and the only devDependencies (``typescript`` and
``@types/node``), and ``packages/pi-course`` whose ``tsconfig.json`` asks for
``"types": ["node"]``. A student may submit either the whole monorepo or just the package;
neither comes with ``node_modules``, so neither builds until something provides
``@types/node`` (tsc looks for it in ``node_modules`` folders up the parent chain).
"""

from __future__ import annotations

import shutil
from pathlib import Path

COURSE_TS = Path(__file__).resolve().parent / "js" / "course-ts"
#: What chapter 05 adds to course-ts: ``src/provider-adapter.ts`` (course-ts itself is at chapter 04).
CHAPTER_05 = Path(__file__).resolve().parent / "js" / "course-ts-05"
#: What chapter 06 adds to course-ts at chapter 05: ``src/tool.ts`` and its focused test.
CHAPTER_06 = Path(__file__).resolve().parent / "js" / "course-ts-06"
#: What chapter 07 adds on top of chapter 06: ``src/agent-loop.ts``, a placeholder whose labs are not done yet.
CHAPTER_07 = Path(__file__).resolve().parent / "js" / "course-ts-07"
#: What chapter 09 adds on top of chapter 06: ``src/agent.ts`` (the reducer, lab 9.1) and its focused test.
CHAPTER_09 = Path(__file__).resolve().parent / "js" / "course-ts-09"
PACKAGE = Path("packages") / "pi-course"

# Build output and installs a developer may have left in the tracked tree by hand (git
# ignores them): a materialised project starts from sources only, like a fresh submission.
_UNTRACKED = shutil.ignore_patterns("dist", "node_modules")


def monorepo(target: Path) -> Path:
    """Copy the whole monorepo to ``target`` (which must not exist) and return it.

    The project root is ``target``; the package is ``target / "packages" / "pi-course"``.
    """
    shutil.copytree(COURSE_TS, target, ignore=_UNTRACKED)
    return target


def single_package(target: Path) -> Path:
    """Copy just ``packages/pi-course`` to ``target`` (which must not exist) as the project root.

    Its ``package.json`` is unchanged: a build script and no devDependencies, so nothing in
    the project names TypeScript or ``@types/node``.
    """
    shutil.copytree(COURSE_TS / PACKAGE, target, ignore=_UNTRACKED)
    return target


def chapter_05(target: Path) -> Path:
    """The whole monorepo at chapter 05 (course-ts plus ``course-ts-05``'s ``provider-adapter.ts``) at ``target``, and return it."""
    monorepo(target)
    shutil.copytree(CHAPTER_05, target, ignore=_UNTRACKED, dirs_exist_ok=True)
    return target


def chapter_06(target: Path) -> Path:
    """The whole monorepo at chapter 06 (chapter 05 plus ``course-ts-06``'s ``tool.ts``) at ``target``, and return it."""
    chapter_05(target)
    shutil.copytree(CHAPTER_06, target, ignore=_UNTRACKED, dirs_exist_ok=True)
    return target


def chapter_07(target: Path) -> Path:
    """The whole monorepo at chapter 07 (:func:`chapter_06` and ``course-ts-07``'s placeholder ``agent-loop.ts``) at ``target``."""
    chapter_06(target)
    shutil.copytree(CHAPTER_07, target, ignore=_UNTRACKED, dirs_exist_ok=True)
    return target


def chapter_09(target: Path) -> Path:
    """The whole monorepo at chapter 09 (:func:`chapter_06` plus ``course-ts-09``'s ``agent.ts``) at ``target``, and return it."""
    chapter_06(target)
    shutil.copytree(CHAPTER_09, target, ignore=_UNTRACKED, dirs_exist_ok=True)
    return target
