"""``pi-ai:PATH``: an installed ``@earendil-works/pi-ai``, the upstream library (profile ``pi-ai-1``)."""

from __future__ import annotations

from pathlib import Path

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds.base import ImplKind
from conformance.adapters.kinds.command import request_profile
from conformance.adapters.settings import ImplSettings
from conformance.model.profiles import PI_AI_1, PROFILES, get_profile


class PiAi(ImplKind):
    """A folder holding ``node_modules/@earendil-works/pi-ai``, or the package itself."""

    name = "pi-ai"
    usage = "pi-ai:PATH"
    meaning = (
        "an installed @earendil-works/pi-ai (a folder holding node_modules/, or the package), profile pi-ai-1;"
        " options ?package=NAME (another package under PATH) and &runtime=bun"
    )
    profile = PI_AI_1.name
    reference_of = PI_AI_1.name
    folder_target = True
    preload = ("conformance.adapters.pi_ai", "conformance.adapters.process", "conformance.isolation.sandbox")

    def example(self, profile: str) -> str | None:
        if profile != self.profile or PI_AI_1.reference_package is None:
            return None
        name, version = PI_AI_1.reference_package
        return f"--impl {self.usage} (the upstream package: npm install --prefix PATH {name}@{version})"

    def make_adapter(self, target: str, settings: ImplSettings, profile: str) -> Adapter:
        from conformance.adapters.pi_ai import PiAiLayoutError, pi_ai_adapter

        try:
            return request_profile(pi_ai_adapter(target, settings), profile)
        except PiAiLayoutError as error:
            raise self.refusal(error) from error

    def folder_of(self, target: str) -> str:
        from conformance.adapters.pi_ai import PiAiLayoutError, parse_target

        try:
            return parse_target(target).path
        except PiAiLayoutError:
            return target

    def layout_problem(self, target: str) -> str | None:
        from conformance.adapters.pi_ai import PiAiLayoutError, package_folder

        folder = Path(target).expanduser()
        if not (target and folder.is_dir()):
            return None  # starting it says why
        try:
            package_folder(folder)
        except PiAiLayoutError as error:
            return str(self.refusal(error))
        return None

    def is_reference(self, target: str, profile: str) -> bool:
        """Only upstream's package at the version the profile was read from: an old version, a fork
        or a patched copy (another name or version in its package.json) failing a case is no sign the case is wrong."""
        from conformance.adapters.pi_ai import installed_identity

        wanted = get_profile(profile).reference_package if profile in PROFILES else None
        return self.reference_of == profile and wanted is not None and installed_identity(target) == wanted

    def process_needs(self, build: bool) -> list[Path]:
        from conformance.adapters.pi_course import student_process_needs

        return student_process_needs(build=False)  # the same Node.js adapters' folder and node; nothing is built
