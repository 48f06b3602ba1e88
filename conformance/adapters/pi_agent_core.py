"""The ``pi-agent-core:`` transport: an installed ``@earendil-works/pi-agent-core`` (profile ``pi-agent-core-1``).

``node/pi_agent_core_adapter.mjs`` imports the installed package and the ``@earendil-works/pi-ai``
it resolves (its own dependency), plays the agent scenarios (spec/fixture-format.md, "Agent
scenarios") and speaks the JSON-lines protocol, stating ``profile: pi-agent-core-1``.

    pi-agent-core:PATH                                   PATH holds node_modules/@earendil-works/pi-agent-core, or is a package folder
    pi-agent-core:PATH?package=@mariozechner/pi-agent-core   another package name under PATH/node_modules
    pi-agent-core:PATH?runtime=bun                       run the adapter under bun instead of Node.js

Everything else is ``pi-ai:``'s (:mod:`conformance.adapters.pi_ai`): the same option syntax, the
same permission-model flags, sandbox, sealed channel and lockdown, since the package's code is
somebody's code too.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conformance.adapters.interface import Adapter
from conformance.adapters.pi_ai import PiAiLayoutError, PiAiTarget, dependency_roots, find_runtime, package_folder
from conformance.adapters.pi_ai import parse_target as parse_pi_ai_target
from conformance.adapters.pi_course import CourseLayoutError, confined_argv
from conformance.adapters.process import ProcessAdapter
from conformance.adapters.process_options import ProcessOptions
from conformance.adapters.settings import ImplSettings
from conformance.isolation.sandbox import Sandbox, SandboxUnavailable, choose_isolation, runtime_roots

NODE_ADAPTER = Path(__file__).resolve().parent / "node" / "pi_agent_core_adapter.mjs"
PACKAGE_NAME = "@earendil-works/pi-agent-core"


def parse_target(text: str) -> PiAiTarget:
    """``PATH[?package=NAME][&runtime=node|bun]``, with this kind's default package name."""
    target = parse_pi_ai_target(text)
    explicit = "package=" in text.rpartition("?")[2]
    return target if explicit else replace(target, package=PACKAGE_NAME)


def installed_identity(path_text: str) -> tuple[str, str] | None:
    """The (name, version) the named package's package.json states, or None when there is none."""
    import json

    try:
        target = parse_target(path_text)
        folder = package_folder(Path(target.path).expanduser(), target.package)
        manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (PiAiLayoutError, OSError, ValueError):
        return None
    name, version = manifest.get("name"), manifest.get("version")
    return (name, version) if isinstance(name, str) and isinstance(version, str) else None


def pi_agent_core_adapter(path_text: str, settings: ImplSettings) -> Adapter:
    """An adapter for the package ``path_text`` names (see the module docstring for its options)."""
    target = parse_target(path_text)
    if not target.path:
        raise PiAiLayoutError("needs a path: a folder where the package is installed, as in /tmp/pi-agent-core")
    path = Path(target.path).expanduser().resolve()
    if not path.is_dir():
        raise PiAiLayoutError(f"{target.path!r} is not a folder")
    package = package_folder(path, target.package)
    runtime = find_runtime(target.runtime)
    try:
        isolation = choose_isolation(settings.sandbox)
    except SandboxUnavailable as error:
        raise PiAiLayoutError(str(error)) from error
    roots = dependency_roots(package)  # pi-ai among them: the adapter imports the one the package resolves
    sandbox = None
    if isolation == "bwrap":
        sandbox = Sandbox(read_only=(NODE_ADAPTER.parent, *roots, *runtime_roots([runtime])), chdir=package)
    try:
        argv = confined_argv(runtime, NODE_ADAPTER, package, roots, "pi-agent-core")
    except CourseLayoutError as error:
        raise PiAiLayoutError(str(error)) from error
    options = ProcessOptions.from_settings(argv, settings, cwd=package, sandbox=sandbox)
    options.require_seal = True  # our adapter seals its lines: one the implementation forges is refused
    return ProcessAdapter(options, name=target.package)
