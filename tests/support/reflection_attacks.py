"""The cheats of issue 32, item 1: student code that reflects on the adapter's own process.

Each builder returns the text of ``dist/src/types.js`` for a submission that implements nothing
itself and carries a table of public answers (:func:`answer_table`). The cheat gets the adapter's
sealing key (or its sealing function) out of the process it shares with the adapter, then takes
over stdin and answers every later request from the table, sealed. Before the adapter ran under
Node.js's permission model these earned nearly every point of the cases in the table; now the
first step is refused, and the submission earns what the skeleton earns.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.adapters.settings import ImplSettings
from conformance.grading.grader import GradeOptions, grade_submission, prepare
from conformance.grading.rubric import load_rubric
from conformance.model.cases import Case
from tests.support.fakes.lookup_table import record


def grade_lab(project: Path, lab: str, operation: str | None = None) -> tuple[float, list[str]]:
    """``lab``'s points for the course project at ``project`` (unsandboxed, unbuilt) and the messages of its
    cases (of ``operation``'s only, when given)."""
    context = prepare(load_rubric(None, "course"))
    result = grade_submission(f"pi-course:{project}", context, GradeOptions(settings=ImplSettings(sandbox="none"), build=False))
    points = next(graded.points for graded in result.score.labs if graded.lab == lab)
    cases = [graded for graded in result.score.cases if graded.case.lab == lab and operation in (None, graded.case.operation)]
    return points, [graded.outcome.message for graded in cases]


# A request line as the cheat keys it: the operation, the input and the steps as the runner sends them.
_KEY = 'request.op + "\\n" + JSON.stringify(request.input) + "\\n" + JSON.stringify(request.steps ?? [])'


def table_key(case: Case) -> str:
    """The key :data:`_KEY` computes in JavaScript for the request of ``case``."""
    bare = [{key: value for key, value in step.items() if key != "expect"} for step in case.steps]
    compact = {"ensure_ascii": False, "separators": (",", ":")}
    return f"{case.operation}\n{json.dumps(case.input, **compact)}\n{json.dumps(bare, **compact)}"  # type: ignore[arg-type]


def answer_table(cases: list[Case]) -> str:
    """The cases' public answers (the reference's observations) as a JavaScript object literal."""
    observations = record(cases)
    from conformance.yamlio.canonical import inputs_key

    table = {table_key(case): observations[inputs_key(case.operation, case.input, case.steps)] for case in cases}
    return json.dumps(table, ensure_ascii=False)


# With the key, every later request is answered from the table with a valid seal; the adapter
# never sees them (its stdin listeners are removed). The request in flight is the adapter's.
_TAKE_OVER = """
import { createHmac as __hmac } from "node:crypto";
import { writeSync as __write } from "node:fs";
const __TABLE = %TABLE%;
function __seal(key, message) {
  const text = JSON.stringify(message);
  return `${text.slice(0, -1)},"seal":"${__hmac("sha256", key).update(text).digest("hex")}"}\\n`;
}
export function __serve(send) {
  process.stdin.removeAllListeners("data");
  let buffered = "";
  process.stdin.on("data", (chunk) => {
    buffered += chunk;
    let end;
    while ((end = buffered.indexOf("\\n")) >= 0) {
      const request = JSON.parse(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
      const observation = __TABLE[%KEY%];
      send(request.op === "stop" ? { seq: request.seq, ok: true }
        : observation ? { seq: request.seq, ok: true, observation }
        : { seq: request.seq, ok: false, error: { kind: "not_implemented", message: "not in the table" } });
      if (request.op === "stop") process.exit(0);
    }
  });
}
export const __takeOver = (key) => __serve((answer) => __write(1, __seal(key, answer)));
""".replace("%KEY%", _KEY)

# Walks the closures reachable from process.stdout.write (the adapter's replacement) through the
# inspector's [[Scopes]], to the channel module's `sealKey`. `post` is the session's post as a promise.
_FIND_KEY = """
async function __findKey(post) {
  const start = await post("Runtime.evaluate", { expression: "process.stdout.write" });
  const queue = [start.result.objectId];
  const seen = new Set();
  while (queue.length > 0 && seen.size < 400) {
    const id = queue.shift();
    if (seen.has(id)) continue;
    seen.add(id);
    const { result, internalProperties = [] } = await post("Runtime.getProperties", { objectId: id, ownProperties: true });
    for (const internal of internalProperties) if (internal.name === "[[Scopes]]") queue.push(internal.value.objectId);
    for (const property of result) {
      const value = property.value;
      if (!value || !value.objectId) continue;
      if (property.name === "sealKey" && value.subtype === "typedarray") {
        const bytes = await post("Runtime.getProperties", { objectId: value.objectId, ownProperties: true });
        return Buffer.from(bytes.result.filter((item) => /^\\d+$/.test(item.name)).map((item) => item.value.value));
      }
      const walked = value.type === "function" || value.subtype === "internal#scope" || value.subtype === "internal#scopeList";
      if (walked) queue.push(value.objectId);
    }
  }
  throw new Error("no key found");
}
"""


def inspector_forger(table: str) -> str:
    """Cheat: a ``node:inspector`` session in the adapter's own thread reads the key from the channel's closure."""
    return (
        'import __inspector from "node:inspector";\n'
        + _TAKE_OVER.replace("%TABLE%", table)
        + _FIND_KEY
        + """
const __session = new __inspector.Session();
__session.connect();
const __post = (method, params) =>
  new Promise((resolve, reject) => __session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
__takeOver(await __findKey(__post));
"""
    )


def worker_forger(table: str) -> str:
    """Cheat: a worker thread whose ``inspector.Session#connectToMainThread()`` walks the main thread's closures.

    The walk is :func:`inspector_forger`'s; the main thread serves the worker's session only between
    its own tasks, which made the walk stall here while the adapter's readline held stdin. So what the
    drill measures is the step the attack needs: once the worker's session is open, ``textOf``
    answers from the table (standing for the forged lines); where no worker may start, it cannot.
    """
    worker = (
        'const { Session } = require("node:inspector");\n'
        + _FIND_KEY
        + """
const session = new Session();
session.connectToMainThread();
const post = (method, params) =>
  new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
__findKey(post).catch(() => {});
"""
    )
    return (
        'import { Worker as __Worker } from "node:worker_threads";\n'
        + f"const __TABLE = {table};\n"
        + f"const __worker = new __Worker({json.dumps(worker)}, {{ eval: true }});\n"
        + "__worker.unref();\n"
        + 'export const textOf = (message) => __TABLE["text_of\\n" + JSON.stringify({ message }) + "\\n[]"]?.value;\n'
    )


def channel_importer(table: str) -> str:
    """Cheat: imports the adapter's own ``channel.mjs`` (the same module instance) and seals with its writer."""
    return (
        _TAKE_OVER.replace("%TABLE%", table)
        + """
import __path from "node:path";
import { pathToFileURL as __url } from "node:url";
const __channel = await import(__url(__path.join(__path.dirname(process.argv[1]), "channel.mjs")).href);
const __writeLine = __channel.writeLine ?? __channel.openChannel().writeLine;
__serve(__writeLine);
"""
    )


def promise_hijacker(table: str) -> str:
    """Cheat: points ``globalThis.Promise`` at a subclass whose ``race`` (which decides each response) answers from the table."""
    return (
        _TAKE_OVER.replace("%TABLE%", table)
        + """
let __request = null;
process.stdin.prependListener("data", (chunk) => {
  const line = String(chunk).split("\\n").find((text) => text.trim());
  if (line) __request = JSON.parse(line);
});
class __Rigged extends Promise {
  static race(promises) {
    const request = __request;
    const observation = request && __TABLE[%KEY%];
    return observation ? super.resolve({ ok: true, observation }) : super.race(promises);
  }
}
globalThis.Promise = __Rigged;
""".replace("%KEY%", _KEY)
    )
