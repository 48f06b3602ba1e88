"""``pi-agent-core:PATH``: an installed ``@earendil-works/pi-agent-core``, the upstream agent runtime (profile ``pi-agent-core-1``)."""

from __future__ import annotations

from pathlib import Path

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds.base import ImplKind
from conformance.adapters.kinds.command import request_profile
from conformance.adapters.settings import ImplSettings
from conformance.model.profiles import PI_AGENT_CORE_1, PROFILES, get_profile


class PiAgentCore(ImplKind):
    """A folder holding ``node_modules/@earendil-works/pi-agent-core``, or the package itself."""

    name = "pi-agent-core"
    usage = "pi-agent-core:PATH"
    meaning = (
        "an installed @earendil-works/pi-agent-core (a folder holding node_modules/, or the package), profile pi-agent-core-1;"
        " options ?package=NAME (another package under PATH) and &runtime=bun"
    )
    profile = PI_AGENT_CORE_1.name
    reference_of = PI_AGENT_CORE_1.name
    folder_target = True
    preload = ("conformance.adapters.pi_agent_core", "conformance.adapters.process", "conformance.isolation.sandbox")

    def example(self, profile: str) -> str | None:
        if profile != self.profile or PI_AGENT_CORE_1.reference_package is None:
            return None
        name, version = PI_AGENT_CORE_1.reference_package
        return f"--impl {self.usage} (the upstream package: npm install --prefix PATH {name}@{version})"

    def make_adapter(self, target: str, settings: ImplSettings, profile: str) -> Adapter:
        from conformance.adapters.pi_agent_core import pi_agent_core_adapter
        from conformance.adapters.pi_ai import PiAiLayoutError

        try:
            return request_profile(pi_agent_core_adapter(target, settings), profile)
        except PiAiLayoutError as error:
            raise self.refusal(error) from error

    def folder_of(self, target: str) -> str:
        from conformance.adapters.pi_agent_core import parse_target
        from conformance.adapters.pi_ai import PiAiLayoutError

        try:
            return parse_target(target).path
        except PiAiLayoutError:
            return target

    def layout_problem(self, target: str) -> str | None:
        from conformance.adapters.pi_agent_core import PACKAGE_NAME
        from conformance.adapters.pi_ai import PiAiLayoutError, package_folder

        folder = Path(target).expanduser()
        if not (target and folder.is_dir()):
            return None  # starting it says why
        try:
            package_folder(folder, PACKAGE_NAME)
        except PiAiLayoutError as error:
            return str(error)
        return None

    def is_reference(self, target: str, profile: str) -> bool:
        """Only upstream's package at the version the profile was read from (a patched copy names another version or package)."""
        from conformance.adapters.pi_agent_core import installed_identity

        wanted = get_profile(profile).reference_package if profile in PROFILES else None
        return self.reference_of == profile and wanted is not None and installed_identity(target) == wanted

    def process_needs(self, build: bool) -> list[Path]:
        from conformance.adapters.pi_course import student_process_needs

        return student_process_needs(build=False)  # the same Node.js adapters' folder and node; nothing is built
