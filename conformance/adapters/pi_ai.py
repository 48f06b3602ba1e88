"""The ``pi-ai:`` transport: the published upstream library ``@earendil-works/pi-ai`` (profile ``pi-ai-1``).

``node/pi_ai_adapter.mjs`` imports the installed package and speaks the JSON-lines protocol,
stating ``profile: pi-ai-1`` in its handshake; this module finds the package and starts it.
PATH is a folder the package is installed in (it holds ``node_modules/@earendil-works/pi-ai``)
or the package folder itself (it holds ``package.json`` named ``@earendil-works/pi-ai``).

Like ``pi-course:``, the program runs in the sandbox (``--sandbox``): it sees the adapter, the
Node.js runtime and the folder the package's modules resolve from, all read-only, and
nothing else of this machine. A port being graded is somebody's code too.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.adapter import Adapter
from conformance.adapters.pi_course import CourseLayoutError, find_node
from conformance.adapters.process import ProcessAdapter, ProcessOptions
from conformance.adapters.sandbox import Sandbox, SandboxUnavailable, choose_isolation, runtime_roots
from conformance.adapters.settings import ImplSettings
from conformance.profiles import PI_AI_1

NODE_ADAPTER = Path(__file__).resolve().parent / "node" / "pi_ai_adapter.mjs"
PACKAGE_NAME = "@earendil-works/pi-ai"


class PiAiLayoutError(ValueError):
    """PATH holds no installed ``@earendil-works/pi-ai``, or Node.js is missing."""


def package_folder(path: Path) -> Path:
    """The package folder for either accepted form of PATH; an error that says what was looked for."""
    candidates = (path / "node_modules" / "@earendil-works" / "pi-ai", path)
    for candidate in candidates:
        manifest = candidate / "package.json"
        try:
            name = json.loads(manifest.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            continue
        if name == PACKAGE_NAME:
            return candidate
    raise PiAiLayoutError(
        f"pi-ai: {path} holds no {PACKAGE_NAME}: expected {candidates[0]} (install it with "
        f"`npm install --prefix {path} {PACKAGE_NAME}@1`) or a package folder whose package.json is named {PACKAGE_NAME}"
    )


def pi_ai_adapter(path_text: str, settings: ImplSettings) -> Adapter:
    """An adapter for the package installed at ``path_text``."""
    if not path_text:
        raise PiAiLayoutError("pi-ai: needs a path, as in pi-ai:/tmp/pi-ai (a folder where the package is installed)")
    path = Path(path_text).expanduser().resolve()
    if not path.is_dir():
        raise PiAiLayoutError(f"pi-ai: {path_text!r} is not a folder")
    package = package_folder(path)
    try:
        node = find_node()
    except CourseLayoutError as error:
        raise PiAiLayoutError(str(error).replace("pi-course:", "pi-ai:")) from error
    try:
        isolation = choose_isolation(settings.sandbox)
    except SandboxUnavailable as error:
        raise PiAiLayoutError(str(error)) from error
    sandbox = None
    if isolation == "bwrap":
        sandbox = Sandbox(read_only=(NODE_ADAPTER.parent, resolution_root(package), *runtime_roots([node])), chdir=package)
    options = ProcessOptions.from_settings([node, str(NODE_ADAPTER), str(package)], settings, cwd=package, sandbox=sandbox)
    options.require_seal = True  # our adapter seals its lines: one the implementation forges is refused
    adapter = ProcessAdapter(options, name=PACKAGE_NAME)
    adapter.requested_profile = PI_AI_1.name
    return adapter


def resolution_root(package: Path) -> Path:
    """The folder the package's own imports resolve from: the one holding the outermost ``node_modules`` above it.

    ``PREFIX/node_modules/@earendil-works/pi-ai`` resolves its dependencies from
    ``PREFIX/node_modules``, so the sandbox shows PREFIX; a package folder outside any
    ``node_modules`` (a checkout with its own) shows itself.
    """
    parts = package.parts
    if "node_modules" not in parts:
        return package
    return Path(*parts[: parts.index("node_modules")])
