"""Submission trees that break naive graders (issue 32): too deep, too long a path, a name that is not UTF-8.

Each starts as a copy of the correct course project, so whatever the tree adds is the only
reason a grade could differ. The deep and long trees are made relative to open folders:
their full paths are past what the kernel accepts in one call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.isolation.submission_copy import remove_tree
from tests.support.attack_projects import copy_project

#: The folder name of :func:`undecodable_copy`: Latin-1 "é" and a lone 0xff, neither valid UTF-8.
UNDECODABLE = os.fsdecode(b"caf\xe9-\xff")
#: How :func:`conformance.common.student_text.path_text` writes it.
UNDECODABLE_TEXT = "caf\\xe9-\\xff"


def nested_folders(root: Path, levels: int, name: str) -> None:
    """Make ``levels`` folders called ``name``, each inside the last, under ``root``."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w", encoding="utf-8") as file:
            file.write("the end of the tree\n")
    finally:
        os.close(fd)


def deep_copy(target: Path, levels: int = 1500) -> Path:
    """The correct project with ``levels`` nested folders in its package (issue 32: 1,500 crashed the grader)."""
    project = copy_project(target)
    nested_folders(project / "packages" / "pi-course", levels, "d")
    return project


def long_path_copy(target: Path, characters: int = 5000) -> Path:
    """The correct project with one path of about ``characters`` characters in its package (250-character names)."""
    project = copy_project(target)
    nested_folders(project / "packages" / "pi-course", characters // 251 + 1, "x" * 250)
    return project


def undecodable_copy(parent: Path) -> Path:
    """The correct project in a folder of ``parent`` whose name is not UTF-8 (:data:`UNDECODABLE`)."""
    return copy_project(parent / UNDECODABLE)


def scratch_fixture() -> Callable[[Path], Iterator[Path]]:
    """A fixture ``scratch`` for a test module (``_scratch = scratch_fixture()``): ``tmp_path``, emptied however deep its trees go.

    pytest's own clean-up of old temporary folders recurses, and would fail on these trees.
    """

    @pytest.fixture(name="scratch")
    def scratch(tmp_path: Path) -> Iterator[Path]:
        yield tmp_path
        for entry in tmp_path.iterdir():
            remove_tree(entry)

    return scratch
