// Lab isolation: a later lab's module runs over the reference of the earlier chapters' modules.
//
// A ScriptedModel (lab 4) imports the student's own "./event-stream.js" and "./types.js"
// (lab 3). Left alone, a lab 3.2 bug fails lab 4 cases too, and grading must guess whose bug a
// failure is (conformance/grading/attribution.py), which a student can game. Here the adapter
// imports the lab 4 module under a *context* (a query on its URL, ?pi-lab=<operation>), and a
// resolve hook (node:module registerHooks, in-thread, so it needs no worker: the permission
// model denies workers) keeps the context on every student module that module reaches, and
// gives it the reference (reference/*.mjs) for each student module isolation.json redirects.
// Lab 3 cases import the same files without a context: the student's own code.
//
// What holds, whatever the specifier (relative, absolute, a file: URL, another query or hash,
// a symlink, a dynamic import(), import.meta.resolve), since the hook looks at where the
// import resolves to, not at how it was written:
// - from a module in a context, a redirected student file is the reference;
// - from a module in a context, any other student file is in the same context;
// - require() of a redirected student file from student code is refused (registerHooks runs for
//   require too), so createRequire is no way round;
// - a context cannot be entered from student code outside one (its query is dropped);
// - after install, module.register and module.registerHooks throw: student hooks, which would
//   run before these, cannot undo them (lockModuleHooks, called by lockdown.mjs).
// Not held (and worth nothing): student code may read its own file with fs and evaluate the text;
// that text is then its lab 4 code, charged to lab 4. The reference is public (it ships in the
// package); reaching it is copying, as reading the course's own solution would be.
//
// Node.js 20 has no registerHooks (and module.register needs a worker): there, and under bun,
// isolate() returns null and lab 4 plays over the student's own modules, as before.
// No dependencies: Node.js built-ins only.

import { readFileSync, realpathSync } from "node:fs";
import module from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REFERENCE = path.join(HERE, "reference");
const PARAM = "pi-lab";

/** The table: operation -> {module, labs, redirect: {student file: reference file}, isolated_from}. */
export const TABLE = Object.fromEntries(
  Object.entries(JSON.parse(readFileSync(path.join(HERE, "isolation.json"), "utf8"))).filter(([key]) => !key.startsWith("_")),
);

/** The context of a URL (the operation named by its query), or null. */
function contextOf(url) {
  if (typeof url !== "string" || !url.startsWith("file:")) return null;
  const name = new URL(url).searchParams.get(PARAM);
  return name !== null && Object.hasOwn(TABLE, name) ? name : null;
}

function withContext(filePath, name) {
  const url = pathToFileURL(filePath);
  url.searchParams.set(PARAM, name);
  return url.href;
}

/** Where a module resolved to, as a real path, or null when it is no file. */
function fileOf(url) {
  if (!url.startsWith("file:")) return null;
  const file = fileURLToPath(new URL(url.split(/[?#]/, 1)[0]));
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

const inside = (file, root) => file === root || file.startsWith(root + path.sep);

/** The resolve hook for the student's modules below `root`; `redirected` names the files some context redirects. */
function resolver(root, redirected) {
  return (specifier, context, nextResolve) => {
    const resolved = nextResolve(specifier, context);
    const file = fileOf(resolved.url);
    if (file === null || !inside(file, root) || inside(file, REFERENCE)) return resolved;
    const parent = context.parentURL;
    const parentFile = typeof parent === "string" ? fileOf(parent) : null;
    const fromStudent = parentFile !== null && inside(parentFile, root);
    const relative = path.relative(root, file);
    if (fromStudent && (context.conditions ?? []).includes("require") && redirected.has(relative)) {
      throw new Error(`lab isolation: ${relative} cannot be required here; import it`);
    }
    // A context is entered only by the adapter's own import, carried on by student modules in it.
    const name = fromStudent ? contextOf(parent) : contextOf(resolved.url);
    if (name === null) return fromStudent && contextOf(resolved.url) !== null ? { ...resolved, url: pathToFileURL(file).href } : resolved;
    const target = TABLE[name].redirect[relative];
    if (target !== undefined) return { url: withContext(path.join(REFERENCE, target), name), format: "module", shortCircuit: true };
    return { ...resolved, url: withContext(file, name), shortCircuit: true };
  };
}

/** Install isolation for the student's modules in `modulesDir`; the URL maker for contexts, or null where it cannot be had. */
export function isolate(modulesDir) {
  if (typeof module.registerHooks !== "function" || process.versions.bun) return null;
  const root = fileOf(pathToFileURL(path.resolve(modulesDir)).href);
  const redirected = new Set(Object.values(TABLE).flatMap((entry) => Object.keys(entry.redirect)));
  module.registerHooks({ resolve: resolver(root, redirected) });
  return { url: (name, file) => withContext(path.join(root, file), name), table: TABLE };
}
