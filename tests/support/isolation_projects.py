"""Course projects for the lab isolation drills (conformance/adapters/node/lab_isolation.mjs).

``make_bypass_project``: the correct project with a lab 3.2 bug (``result()`` resolves with a
copy) whose ``scripted-model.js`` tries every way round the redirect it can name, and plays with
the stream class the first one hands it when that is not the one its plain import gave
(its own, buggy one: lab 4 then fails). A way round that is refused (a throw) is fine too. So lab
4 passes only if no attempt reached the student's own lab 3 module.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.attack_projects import MODULES, copy_project

#: result() resolves with a copy: a lab 3.2 bug that fails most lab 4 cases when lab 4 plays through it.
COPY_BUG = ("    this.#resolveResult(value);", "    this.#resolveResult(structuredClone(value));")

#: Every way the drill tries to reach its own event-stream.js, as (name, JavaScript expression for the module namespace).
ATTEMPTS = {
    "another query": 'import("./event-stream.js?bypass=1")',
    "a hash": 'import("./event-stream.js#bypass")',
    "an absolute file URL": 'import(new URL("./event-stream.js", import.meta.url.split("?")[0]).href)',
    "import.meta.resolve": 'import(import.meta.resolve("./event-stream.js"))',
    "a symlink": 'import("./alias.js")',
    "a percent-encoded name": 'import("./event%2Dstream.js")',
    "a helper module": 'import("./helper.js").then((helper) => helper.stream())',
    "createRequire": 'Promise.resolve().then(() => nodeModule.createRequire(import.meta.url)("./event-stream.js"))',
    "its own module hooks": (
        "Promise.resolve().then(() => { nodeModule.registerHooks({ resolve: (s, c, next) => next(s, c) });"
        ' return import("./event-stream.js?after-hooks=1"); })'
    ),
}

_MODEL_HEAD = """\
import * as nodeModule from "node:module";
import { AssistantMessageEventStream as Plain } from "./event-stream.js";
const attempts = {
ATTEMPTS
};
let Stream = Plain;
for (const [name, attempt] of Object.entries(attempts)) {
  let namespace;
  try {
    namespace = await attempt();
  } catch {
    continue; // refused: no way round
  }
  if (namespace.AssistantMessageEventStream !== Plain) {
    console.error(`lab isolation bypassed by ${name}`);
    Stream = namespace.AssistantMessageEventStream;
    break;
  }
}
"""


def make_bypass_project(target: Path) -> Path:
    """The drill project at ``target`` (see the module's docstring)."""
    copy_project(target)
    modules = target / MODULES
    stream = modules / "event-stream.js"
    text = stream.read_text(encoding="utf-8")
    if text.count(COPY_BUG[0]) != 1:
        raise RuntimeError("event-stream.js: the result line moved in course-correct")
    stream.write_text(text.replace(*COPY_BUG), encoding="utf-8")
    os.symlink("event-stream.js", modules / "alias.js")
    (modules / "helper.js").write_text('export const stream = () => import("./event-stream.js");\n', encoding="utf-8")
    model = modules / "scripted-model.js"
    source = model.read_text(encoding="utf-8")
    plain_import = 'import { AssistantMessageEventStream } from "./event-stream.js";\n'
    if source.count(plain_import) != 1 or source.count("new AssistantMessageEventStream()") != 1:
        raise RuntimeError("scripted-model.js: its stream import moved in course-correct")
    attempts = ",\n".join(f"  {name!r}: () => {expression}" for name, expression in ATTEMPTS.items())
    source = source.replace(plain_import, _MODEL_HEAD.replace("ATTEMPTS", attempts))
    source = source.replace("new AssistantMessageEventStream()", "new Stream()")
    model.write_text(source, encoding="utf-8")
    return target


def make_forging_project(target: Path) -> Path:
    """A project whose lab 3 stream module is only a re-export of itself through the isolation context's URL.

    Were the context open to lab 3 code, ``./proxy.js?pi-lab=scripted_model`` would be in it, its
    ``./event-stream.js`` the reference, and lab 3.2 would pass on the reference's code.
    """
    copy_project(target)
    modules = target / MODULES
    (modules / "event-stream.js").write_text('export * from "./proxy.js?pi-lab=scripted_model";\n', encoding="utf-8")
    (modules / "proxy.js").write_text('export * from "./event-stream.js";\n', encoding="utf-8")
    return target
