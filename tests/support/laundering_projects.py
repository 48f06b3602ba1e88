"""Attribution laundering: course projects that try to earn lab 4 points with junk lab 4 code.

Each is a copy of ``tests/support/js/course-correct`` whose ScriptedModel plays nothing (it
records requests, then ends every stream without an event, so ``result()`` stays pending).
No lab 4 case can pass. The cheats then try to have those failures excused as "because of
an earlier lab", so that lab 4 keeps its points:

- ``junk-model``: nothing more; lab 4.2's failures look like lab 4.1's (a shared module).
- ``junk-model-free-evidence``: the generic ``EventStream`` (chapter 02, weight 0 in the
  default rubric) also drops every event and ends silently, so the free ``stream-generic-*``
  cases show the same symptoms as every lab 4 case.
- ``junk-model-cheap-evidence``: instead, the ``AssistantMessageEventStream`` fails one
  weighted lab 3.2 case (a first ``done`` with reason ``length``) the same way.

An honest submission with the same real code is ``honest-junk-model``: the same junk
ScriptedModel and a correct lab 3; the cheats must score no more than it does.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.attack_projects import MODULES, copy_project

#: A ScriptedModel that stores requests correctly and plays nothing at all.
JUNK_MODEL = """\
import { AssistantMessageEventStream } from "./event-stream.js";
export const EXHAUSTED_MESSAGE = "junk";
export const ABORTED_MESSAGE = "junk";
export class ScriptedModel {
  requests = [];
  constructor(turns) {}
  stream(context, options = {}) {
    this.requests.push(structuredClone(context));
    const stream = new AssistantMessageEventStream();
    queueMicrotask(() => stream.end());
    return stream;
  }
}
"""

#: The generic EventStream (not its subclass) drops what is pushed and ends: the weight-0 cases fail.
_FREE_EVIDENCE = (
    "  push(event) {\n",
    "  push(event) {\n    if (this.constructor === EventStream) {\n      this.end();\n      return;\n    }\n",
)

#: The AssistantMessageEventStream drops a first done event with reason length and ends:
#: stream-length-done-only (lab 3.2, weight 1) fails with the junk model's symptoms.
_CHEAP_EVIDENCE = (
    "  push(event) {\n",
    "  #pushed = false;\n  push(event) {\n"
    "    const first = !this.#pushed;\n    this.#pushed = true;\n"
    '    if (first && this.constructor !== EventStream && event.type === "done" && event.reason === "length") {\n'
    "      this.end();\n      return;\n    }\n",
)

CHEATS = ("junk-model", "junk-model-free-evidence", "junk-model-cheap-evidence")
HONEST = "honest-junk-model"


def _patch(project: Path, module: str, find: str, replace: str) -> None:
    path = project / MODULES / module
    text = path.read_text(encoding="utf-8")
    if text.count(find) != 1:
        raise RuntimeError(f"{module}: expected exactly one {find!r} in course-correct")
    path.write_text(text.replace(find, replace), encoding="utf-8")


def make_laundering_project(name: str, target: Path) -> Path:
    """The project ``name`` (one of :data:`CHEATS` or :data:`HONEST`) at ``target``."""
    copy_project(target)
    (target / MODULES / "scripted-model.js").write_text(JUNK_MODEL, encoding="utf-8")
    if name == "junk-model-free-evidence":
        _patch(target, "event-stream.js", *_FREE_EVIDENCE)
    elif name == "junk-model-cheap-evidence":
        _patch(target, "event-stream.js", *_CHEAP_EVIDENCE)
    elif name not in ("junk-model", HONEST):
        raise ValueError(f"no laundering project named {name!r}")
    return target
