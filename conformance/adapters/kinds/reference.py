"""``reference``: the bundled Python reference, in process."""

from __future__ import annotations

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds.base import ImplKind
from conformance.adapters.settings import ImplSettings
from conformance.model.profiles import DEFAULT_PROFILE


class Reference(ImplKind):
    """The course's reference implementation (``reference_impl``); ``--impl``'s default."""

    name = "reference"
    usage = "reference"
    meaning = "the bundled Python reference, in process"
    takes_target = False
    profile = DEFAULT_PROFILE
    reference_of = DEFAULT_PROFILE
    separate_process = False

    def example(self, profile: str) -> str | None:
        return f"--impl {self.usage} (the bundled reference)" if profile == self.profile else None

    def make_adapter(self, target: str, settings: ImplSettings, profile: str) -> Adapter:
        from conformance.adapters.reference import create

        return create()
