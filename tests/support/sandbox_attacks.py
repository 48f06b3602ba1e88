"""The cheats of issue 9, as JavaScript a student could put in a compiled module.

Each builder returns the text of ``dist/src/types.js`` (or of all three modules) for a
submission that implements nothing itself. Without a sandbox each one earns points; with
it, none may earn more than an empty project.
"""

from __future__ import annotations

import json
from pathlib import Path

# Walks up from the adapter's parent to the grader (a Python process whose command line
# mentions conformance); falls back on guessing the repository from the adapter's own path.
_FIND_GRADER = r"""
import { readFileSync as __read, readlinkSync as __link, existsSync as __exists } from "node:fs";
import __path from "node:path";
function __grader() {
  for (let pid = process.ppid, i = 0; pid > 0 && i < 12; i++) {
    try {
      const argv = __read(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const exe = __link(`/proc/${pid}/exe`);
      if (__path.basename(exe).startsWith("python") && argv.some((a) => a.includes("conformance"))) {
        const environ = __read(`/proc/${pid}/environ`, "utf8").split("\0");
        const pythonpath = (environ.find((e) => e.startsWith("PYTHONPATH=")) || "").slice(11);
        return { python: argv[0], argv, cwd: __link(`/proc/${pid}/cwd`), pythonpath };
      }
      pid = Number(__read(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[1]);
    } catch {
      break;
    }
  }
  const repo = __path.resolve(__path.dirname(process.argv[1]), "../../..");
  const venv = `${repo}/.venv/bin/python`;
  return { python: __exists(venv) ? venv : "python3", argv: [], cwd: repo, pythonpath: repo };
}
const __found = __grader();
"""


def reference_proxy() -> str:
    """Cheat (a): ``textOf`` asks the grader's own reference implementation for each answer."""
    return (
        _FIND_GRADER
        + r"""
import { spawnSync as __spawnSync } from "node:child_process";
function __reference(name, arg) {
  const code = `import json, sys\nfrom reference_impl import projection\nprint(json.dumps(projection.${name}(json.load(sys.stdin))))`;
  const env = { ...process.env, PYTHONPATH: [__found.pythonpath, __found.cwd].filter(Boolean).join(":") };
  const run = __spawnSync(__found.python, ["-c", code], { cwd: __found.cwd, env, input: JSON.stringify(arg) });
  if (run.status !== 0) throw new Error("no reference to copy from");
  return JSON.parse(run.stdout.toString());
}
// One function is enough to make the point (and keeps the test quick): 30 text_of cases.
export const textOf = (message) => __reference("text_of", message);
"""
    )


def fixture_forger(fixtures: Path) -> str:
    """Cheat (b): read the fixtures (``fixtures``, then the grader's --fixtures and bundled ones) and forge answers.

    The request in flight when the module is imported is answered through the functions; every
    later request is answered directly with ``fs.writeSync(1, ...)``, and the adapter's own
    answers are swallowed.
    """
    return (
        _FIND_GRADER
        + f"const __known = {json.dumps(str(fixtures))};\n"
        + r"""
import { readdirSync as __readdir, writeSync as __writeSync } from "node:fs";
const __flag = __found.argv.indexOf("--fixtures");
const __folders = [__known, __flag >= 0 ? __path.resolve(__found.cwd, __found.argv[__flag + 1]) : "", `${__found.cwd}/fixtures`];
const __expected = new Map();
for (const folder of __folders.filter(Boolean)) {
  for (const chapter of ["ch03", "ch04", "shared"]) {
    let names = [];
    try { names = __readdir(`${folder}/${chapter}`); } catch { continue; }
    for (const name of names) {
      let file;
      try { file = JSON.parse(__read(`${folder}/${chapter}/${name}`, "utf8").split("\n").slice(1).join("\n")); } catch { continue; }
      for (const c of file.cases) if (c.expect) __expected.set(c.operation + JSON.stringify(c.input), c.expect);
    }
  }
}
const __value = (op, input) => {
  const expect = __expected.get(op + JSON.stringify(input));
  if (!expect) throw new Error("no forged answer");
  return expect.value;
};
export const textOf = (message) => __value("text_of", { message });
export const systemMessageText = (message) => __value("system_message_text", { message });
export const currentSystemPrompt = (messages) => __value("current_system_prompt", { messages });
if (__expected.size > 0) {
  // Let the adapter answer the request in flight (its notices too), then answer everything ourselves.
  let passed = 0;
  const original = process.stdout._write.bind(process.stdout);
  const isResponse = (chunk) => String(chunk).includes('"seq"');
  process.stdout._write = (chunk, encoding, done) => (!isResponse(chunk) || passed++ === 0 ? original(chunk, encoding, done) : done());
  let buffered = "";
  process.stdin.on("data", (data) => {
    buffered += data.toString();
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const request = JSON.parse(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
      const expect = __expected.get(request.op + JSON.stringify(request.input));
      const answer = request.op === "stop" ? { seq: request.seq, ok: true }
        : expect ? { seq: request.seq, ok: true, observation: expect }
        : { seq: request.seq, ok: false, error: { kind: "not_implemented", message: "not forged" } };
      __writeSync(1, JSON.stringify(answer) + "\n");
    }
  });
}
"""
    )


def classmate_reexport(classmate: Path) -> dict[str, str]:
    """Cheat (c): each module re-exports the classmate's compiled module by absolute path."""
    modules = classmate / "packages" / "pi-course" / "dist" / "src"
    names = ("types.js", "event-stream.js", "scripted-model.js", "provider-adapter.js", "tool.js")
    return {name: f"export * from {json.dumps(str(modules / name))};" for name in names}


def output_rewriter(target: Path, marker: str) -> str:
    """Cheat (d): a detached process that overwrites ``target`` (a report) as soon as the grader writes it.

    It looks every 20 ms for as long as it lives, so a test need not guess how long grading takes.
    """
    path = json.dumps(str(target))
    script = (
        "const fs = require('fs');"
        "setInterval(() => { try {"
        f" if (fs.existsSync({path})) {{ fs.writeFileSync({path}, 'forged'); process.exit(0); }}"
        " } catch {} }, 20)"
    )
    argv = json.dumps(["-e", script, marker])
    return (
        'import { spawn as __spawn } from "node:child_process";\n'
        f'__spawn(process.execPath, {argv}, {{ detached: true, stdio: "ignore" }}).unref();'
    )
