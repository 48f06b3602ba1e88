"""tests/support/js/course-ts keeps the shape of the real course repository (see tests/support/course_projects.py).

The grader's TypeScript build has to cope with exactly this shape; if the mirror drifted
(say, devDependencies crept into the package), tests built on it would stop proving that.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.course_projects import PACKAGE, monorepo, single_package


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_both_shapes_keep_the_course_repository_layout(tmp_path: Path) -> None:
    root = monorepo(tmp_path / "monorepo")
    package = single_package(tmp_path / "single")
    manifest = _json(root / "package.json")
    assert manifest["workspaces"] == ["packages/*"]
    # The toolchain lives only at the monorepo root, and nothing is installed or locked.
    assert set(manifest["devDependencies"]) == {"typescript", "@types/node"}
    assert not any((root / name).exists() for name in ("node_modules", "package-lock.json"))
    for project in (root / PACKAGE, package):
        course = _json(project / "package.json")
        assert course["name"] == "@pi/course"
        assert course["type"] == "module"
        assert course["scripts"]["build"] == "tsc -p tsconfig.json"
        assert "devDependencies" not in course and "dependencies" not in course
        options = _json(project / "tsconfig.json")["compilerOptions"]
        assert options["types"] == ["node"]
        assert (options["module"], options["moduleResolution"], options["strict"]) == ("NodeNext", "NodeNext", True)
        assert (options["rootDir"], options["outDir"]) == (".", "dist")
        assert _json(project / "tsconfig.json")["include"] == ["src", "test"]
        sources = sorted(path.relative_to(project).as_posix() for path in project.rglob("*.ts"))
        assert sources == [
            "src/event-stream.ts",
            "src/scripted-model.ts",
            "src/types.ts",
            "test/03-message-ir.test.ts",
            "test/04-scripted-model.test.ts",
        ]
        assert not (project / "dist").exists()
        assert "node:test" in (project / "test" / "03-message-ir.test.ts").read_text(encoding="utf-8")
