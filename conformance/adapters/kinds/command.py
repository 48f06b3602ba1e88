"""``cmd:'COMMAND LINE'``: any program speaking the JSON-lines protocol (spec/protocol.md)."""

from __future__ import annotations

from conformance.adapters.interface import Adapter
from conformance.adapters.kinds.base import ImplKind, ImplSpecError
from conformance.adapters.settings import ImplSettings
from conformance.model.profiles import DEFAULT_PROFILE


class Command(ImplKind):
    """A program of any language, started by its command line, under the sandbox and the limits."""

    name = "cmd"
    usage = "cmd:'COMMAND LINE'"
    meaning = "any program speaking the JSON-lines protocol (spec/protocol.md)"
    shell_target = True
    preload = ("conformance.adapters.process", "conformance.isolation.sandbox")

    def make_adapter(self, target: str, settings: ImplSettings, profile: str) -> Adapter:
        from conformance.adapters.process import ProcessAdapter, parse_command
        from conformance.adapters.process_options import ProcessOptions
        from conformance.isolation.sandbox import SandboxUnavailable, choose_isolation, command_sandbox

        try:
            argv = parse_command(target)
        except ValueError as error:
            raise self.refusal(error) from error
        try:
            isolation = choose_isolation(settings.sandbox)
        except SandboxUnavailable as error:
            raise ImplSpecError(str(error)) from error
        sandbox = command_sandbox(argv, settings.env) if isolation == "bwrap" else None
        return request_profile(ProcessAdapter(ProcessOptions.from_settings(argv, settings, sandbox=sandbox)), profile)


def request_profile(adapter: Adapter, profile: str) -> Adapter:
    """``adapter``, which states ``profile`` in its JSON-lines handshake when it is not the course (absent means course)."""
    from conformance.adapters.process import ProcessAdapter

    if isinstance(adapter, ProcessAdapter) and profile != DEFAULT_PROFILE:
        adapter.requested_profile = profile
    return adapter
