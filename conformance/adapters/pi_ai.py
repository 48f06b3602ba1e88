"""The ``pi-ai:`` transport: an installed package implementing upstream ``@earendil-works/pi-ai``'s API (profile ``pi-ai-1``).

``node/pi_ai_adapter.mjs`` imports the installed package and speaks the JSON-lines protocol,
stating ``profile: pi-ai-1`` in its handshake; this module finds the package and starts it.

    pi-ai:PATH                                  PATH holds node_modules/@earendil-works/pi-ai, or is a package folder
    pi-ai:PATH?package=@mariozechner/pi-ai      another package name under PATH/node_modules (a fork, the predecessor)
    pi-ai:PATH?runtime=bun                      run the adapter under bun instead of Node.js

A package folder (one holding ``package.json``) is taken whatever its name: naming it says
it implements the API. Options follow a ``?``, ``&``-separated.

Like ``pi-course:``, the program runs in the sandbox (``--sandbox``): it sees the adapter,
the runtime, the package and every folder its dependency tree resolves from (the
``node_modules`` folders Node.js would search, and the real folders of symlinked packages),
all read-only, and nothing else of this machine. A port being graded is somebody's code too.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from conformance.adapters.interface import Adapter
from conformance.adapters.pi_course import CourseLayoutError, confined_argv, find_node
from conformance.adapters.process import ProcessAdapter
from conformance.adapters.process_options import ProcessOptions
from conformance.adapters.settings import ImplSettings
from conformance.isolation.sandbox import Sandbox, SandboxUnavailable, choose_isolation, runtime_roots

NODE_ADAPTER = Path(__file__).resolve().parent / "node" / "pi_ai_adapter.mjs"
PACKAGE_NAME = "@earendil-works/pi-ai"
RUNTIMES = ("node", "bun")
# A dependency tree larger than this is not walked further (a hostile package.json could list thousands).
MAX_PACKAGES = 2000


class PiAiLayoutError(ValueError):
    """PATH holds no package implementing the API, an option is wrong, or the runtime is missing."""


@dataclass(frozen=True)
class PiAiTarget:
    """What a ``pi-ai:`` value names: the folder, the package name looked for in it, the runtime."""

    path: str
    package: str = PACKAGE_NAME
    runtime: str = "node"


def parse_target(text: str) -> PiAiTarget:
    """``PATH[?package=NAME][&runtime=node|bun]``; a ``?`` not followed by known options is part of the path."""
    path, mark, query = text.rpartition("?")
    if not mark:
        return PiAiTarget(text)
    options: dict[str, str] = {}
    for item in query.split("&"):
        key, equals, value = item.partition("=")
        if not equals or key not in ("package", "runtime") or not value:
            return PiAiTarget(text)  # not our options: a path with a "?" in it
        options[key] = value
    runtime = options.get("runtime", "node")
    if runtime not in RUNTIMES:
        raise PiAiLayoutError(f"runtime={runtime!r}: use one of {', '.join(RUNTIMES)}")
    return PiAiTarget(path, options.get("package", PACKAGE_NAME), runtime)


def _manifest(folder: Path) -> dict[str, object] | None:
    try:
        data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def package_folder(path: Path, name: str = PACKAGE_NAME) -> Path:
    """The package folder: ``PATH/node_modules/NAME``, or PATH itself when it holds a package.json."""
    installed = path / "node_modules" / name
    if _manifest(installed) is not None:
        return installed
    if _manifest(path) is not None:
        return path
    raise PiAiLayoutError(
        f"{path} holds no {name}: expected {installed} (install it with "
        f"`npm install --prefix {path} {name}@1`) or a package folder (one holding package.json)"
    )


def installed_identity(path_text: str) -> tuple[str, str] | None:
    """The (name, version) the package.json of the package ``path_text`` names states, or None when there is none."""
    try:
        target = parse_target(path_text)
        manifest = _manifest(package_folder(Path(target.path).expanduser(), target.package))
    except PiAiLayoutError:
        return None
    name, version = (manifest or {}).get("name"), (manifest or {}).get("version")
    return (name, version) if isinstance(name, str) and isinstance(version, str) else None


def find_runtime(runtime: str) -> str:
    """The executable for ``runtime``: Node.js (checked recent enough) or bun, from PATH."""
    if runtime == "node":
        try:
            return find_node("pi-ai")
        except CourseLayoutError as error:
            raise PiAiLayoutError(str(error)) from error
    found = shutil.which(runtime)
    if found is None:
        raise PiAiLayoutError(f"runtime={runtime} needs {runtime!r} on PATH, and none was found")
    return found


def pi_ai_adapter(path_text: str, settings: ImplSettings) -> Adapter:
    """An adapter for the package ``path_text`` names (see the module docstring for its options)."""
    target = parse_target(path_text)
    if not target.path:
        raise PiAiLayoutError("needs a path: a folder where the package is installed, as in /tmp/pi-ai")
    path = Path(target.path).expanduser().resolve()
    if not path.is_dir():
        raise PiAiLayoutError(f"{target.path!r} is not a folder")
    package = package_folder(path, target.package)
    runtime = find_runtime(target.runtime)
    try:
        isolation = choose_isolation(settings.sandbox)
    except SandboxUnavailable as error:
        raise PiAiLayoutError(str(error)) from error
    sandbox = None
    roots = dependency_roots(package)
    if isolation == "bwrap":
        sandbox = Sandbox(read_only=(NODE_ADAPTER.parent, *roots, *runtime_roots([runtime])), chdir=package)
    try:
        # The package's code runs in the adapter's process: it gets the same permission model as a student's.
        argv = confined_argv(runtime, NODE_ADAPTER, package, roots, "pi-ai")
    except CourseLayoutError as error:
        raise PiAiLayoutError(str(error)) from error
    options = ProcessOptions.from_settings(argv, settings, cwd=package, sandbox=sandbox)
    options.require_seal = True  # our adapter seals its lines: one the implementation forges is refused
    name = str((_manifest(package) or {}).get("name") or target.package)
    adapter = ProcessAdapter(options, name=name)
    return adapter


def dependency_roots(package: Path) -> list[Path]:
    """The folders the package's dependency tree resolves from, for the sandbox to show read-only.

    Follows ``dependencies``, ``optionalDependencies`` and ``peerDependencies`` the way Node.js
    resolves a bare import: from each package's real folder up through every ancestor's
    ``node_modules``. Gives the package itself, each ``node_modules`` folder a dependency was
    found in, and each dependency's real folder (a symlinked package, as pnpm and workspaces
    make them, lives elsewhere in the same tree; a link out of the folder holding that
    ``node_modules`` is not followed), outermost folders only.
    """
    start = Path(os.path.realpath(package))
    roots: set[Path] = {start, resolution_root(start)}
    seen: set[Path] = set()
    queue = [start]
    while queue and len(seen) < MAX_PACKAGES:
        folder = queue.pop()
        if folder in seen:
            continue
        seen.add(folder)
        for name in _dependency_names(_manifest(folder) or {}):
            found = _find_dependency(folder, name)
            if found is None:
                continue  # an optional dependency not installed: Node.js reports it if it is imported
            holder, real = found
            # A symlinked package is followed only inside the tree that holds it (a workspace, a
            # pnpm store under node_modules): a link to elsewhere on this machine stays hidden.
            if not _inside(real, holder.parent):
                continue
            roots.update((holder, real))
            queue.append(real)
    return _outermost(roots)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _dependency_names(manifest: dict[str, object]) -> list[str]:
    names: list[str] = []
    for key in ("dependencies", "optionalDependencies", "peerDependencies"):
        listed = manifest.get(key)
        if isinstance(listed, dict):
            names.extend(str(name) for name in listed if "/.." not in f"/{name}" and not str(name).startswith("/"))
    return names


def _find_dependency(folder: Path, name: str) -> tuple[Path, Path] | None:
    """(the ``node_modules`` folder it was found in, its real folder) for ``name`` imported from ``folder``."""
    for ancestor in (folder, *folder.parents):
        if ancestor.name == "node_modules":
            continue  # Node.js never looks in node_modules/node_modules
        holder = ancestor / "node_modules"
        candidate = holder / name
        if (candidate / "package.json").is_file():
            return holder, Path(os.path.realpath(candidate))
    return None


def _outermost(folders: set[Path]) -> list[Path]:
    ordered = sorted(folders, key=lambda folder: len(folder.parts))
    kept: list[Path] = []
    for folder in ordered:
        if not any(folder == root or root in folder.parents for root in kept):
            kept.append(folder)
    return kept


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
