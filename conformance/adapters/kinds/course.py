"""``pi-course:PATH``: a student's TypeScript project in the course layout (Node.js 20+: conformance/toolchain/node_versions.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds.base import Built, ImplKind
from conformance.adapters.kinds.command import request_profile
from conformance.adapters.settings import ImplSettings
from conformance.model.profiles import DEFAULT_PROFILE
from conformance.toolchain.node_versions import MINIMUM_MAJOR

if TYPE_CHECKING:
    from conformance.adapters.course_chapters import DetectedChapter


class Course(ImplKind):
    """A course repository, its ``packages/pi-course``, or a folder of compiled modules; built the rubric's way (:mod:`..staff_build`)."""

    name = "pi-course"
    usage = "pi-course:PATH"
    meaning = f"a course repository, its packages/pi-course, or a folder of built modules (Node.js {MINIMUM_MAJOR}+); option ?runtime=bun"
    profile = DEFAULT_PROFILE
    folder_target = True
    course_code = True
    same_adapter_name = True  # every student's package is "pi-course": the folder tells them apart
    builds = True
    preload = ("conformance.adapters.pi_course", "conformance.adapters.process", "conformance.isolation.sandbox")

    def example(self, profile: str) -> str | None:
        return f"--impl {self.usage} (a course project)" if profile == self.profile else None

    def make_adapter(self, target: str, settings: ImplSettings, profile: str) -> Adapter:
        from conformance.adapters.pi_course import CourseLayoutError, pi_course_adapter

        try:
            return request_profile(pi_course_adapter(target, settings), profile)
        except CourseLayoutError as error:
            raise self.refusal(error) from error

    def folder_of(self, target: str) -> str:
        from conformance.adapters.pi_course import CourseLayoutError, split_runtime

        try:
            return split_runtime(target)[0]
        except CourseLayoutError:
            return target

    def layout_problem(self, target: str) -> str | None:
        from conformance.adapters.pi_course import is_course_project

        target = self.folder_of(target)
        project = Path(target).expanduser()
        if target and project.is_dir() and not is_course_project(project):
            return "not a course project: no package.json (in it or in packages/pi-course) and no compiled modules"
        return None

    def unbuilt_problem(self, target: str) -> str | None:
        """A project with a package.json but none of its built modules: one line, rather than every case skipped with its own
        "dist/src/... not found" (249 lines for one cause)."""
        from conformance.adapters.pi_course import COURSE_MODULES, modules_dir, package_dir

        path = Path(self.folder_of(target)).expanduser()
        if not (package_dir(path) / "package.json").is_file() or any((modules_dir(path) / name).is_file() for name in COURSE_MODULES):
            return None
        where = package_dir(path)
        return f"this project is not built: pass `--build` (or run `npm run build` in {where}); {modules_dir(path)} holds no built module"

    def build(self, target: str, settings: ImplSettings) -> Built | None:
        from conformance.adapters.pi_course import CourseLayoutError, build, split_runtime, with_runtime

        try:
            folder, runtime = split_runtime(target)
        except CourseLayoutError:
            return None  # starting it says why
        project = Path(folder).expanduser()
        if not project.is_dir():
            return None  # starting it says why
        built = build(project.resolve(), settings)
        return Built(built.report, with_runtime(str(built.project(project.resolve())), runtime), built.remove)

    def isolated_labs(self, target: str) -> Mapping[str, frozenset[str]]:
        """Lab 4 runs over the reference's lab 3 modules where the runtime has in-thread module hooks (Node.js 22.19+)."""
        from conformance.adapters.lab_isolation import NONE, isolated_labs, isolates
        from conformance.adapters.pi_course import CourseLayoutError, find_node, node_version, split_runtime

        try:
            runtime = split_runtime(target)[1]
            version = node_version(find_node()) if runtime == "node" else None
        except (CourseLayoutError, ValueError, OSError):
            return NONE  # it cannot start either; its cases are not run
        return isolated_labs() if isolates(runtime, version) else NONE

    def detected_chapter(self, target: str) -> DetectedChapter | None:
        """The chapter the project is at, from its modules (:mod:`conformance.adapters.course_chapters`); None: not a folder."""
        from conformance.adapters.course_chapters import detect_chapter

        project = Path(self.folder_of(target)).expanduser()
        return detect_chapter(project) if project.is_dir() else None

    def process_needs(self, build: bool) -> list[Path]:
        from conformance.adapters.pi_course import student_process_needs

        return student_process_needs(build)
