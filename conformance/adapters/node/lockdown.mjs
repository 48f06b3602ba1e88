// What the adapters close before any implementation module loads (docs/isolation.md).
//
// The process runs under Node.js's permission model with --frozen-intrinsics (the runner's
// flags, conformance/adapters/node_runtime.py): no inspector, worker, child process, addon,
// WASI or file write, reads only below the adapter and the code under test, and the built-in
// prototypes frozen. Two ways to reflect on this process remain open under that model, and two
// ways to change what the adapter's own code calls; lockDown() closes them:
//
// - node:v8 can take a heap snapshot (every string of the heap, the handshake's key among
//   them), list live objects by prototype (queryObjects) or switch on V8 flags at run time
//   (--allow-natives-syntax: functions that read and corrupt memory). Those functions are
//   replaced by ones that throw, in node:v8's exports and its ES module view alike.
// - node:module's register and registerHooks add module hooks that run before those already
//   there: code under test could undo lab isolation (lab_isolation.mjs, installed just before).
//   They are replaced by functions that throw.
// - The global bindings (Promise, JSON, Object, setTimeout, structuredClone, ...) are not part
//   of the frozen intrinsics: code under test could point `globalThis.Promise` elsewhere and so
//   answer for the adapter (its `Promise.race` decides each response). They are made read-only.
//
// No dependencies: Node.js 20 built-ins only.

import v8 from "node:v8";
import nodeModule, { syncBuiltinESMExports } from "node:module";

/** node:v8's functions that read the heap or change V8's flags. */
const REFLECTING = ["getHeapSnapshot", "writeHeapSnapshot", "setHeapSnapshotNearHeapLimit", "queryObjects", "setFlagsFromString"];

/** The globals the adapters' own code uses, or that every JavaScript program takes for granted. */
const GLOBALS = [
  "globalThis", "Object", "Function", "Array", "Number", "Boolean", "String", "Symbol", "BigInt", "Math", "JSON", "Reflect",
  "Proxy", "Promise", "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "Date", "RegExp", "Error", "TypeError", "RangeError",
  "SyntaxError", "ReferenceError", "EvalError", "URIError", "AggregateError", "ArrayBuffer", "SharedArrayBuffer", "DataView",
  "Atomics", "Uint8Array", "Int32Array", "Uint32Array", "isFinite", "isNaN", "parseInt", "parseFloat", "structuredClone",
  "queueMicrotask", "setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate",
  "AbortController", "AbortSignal", "process",
];

/** node:module's functions that add module hooks: hooks added later run first and could undo lab isolation's. */
const HOOKING = ["register", "registerHooks"];

function refused(name) {
  return () => {
    throw new Error(`${name} is not available to the code under test (docs/isolation.md)`);
  };
}

/** Close what the permission model leaves open (see above); call it before importing the code under test. */
export function lockDown() {
  for (const name of REFLECTING) {
    if (typeof v8[name] === "function") v8[name] = refused(`v8.${name}`);
  }
  for (const name of HOOKING) {
    if (typeof nodeModule[name] === "function") nodeModule[name] = refused(`module.${name}`);
  }
  if (typeof syncBuiltinESMExports === "function") syncBuiltinESMExports(); // `import { getHeapSnapshot } from "node:v8"` (or registerHooks from node:module) now gets the refusing one too
  Object.freeze(v8);
  for (const name of GLOBALS) {
    const found = Object.getOwnPropertyDescriptor(globalThis, name);
    if (found === undefined || !("value" in found)) continue; // an accessor (a lazily loaded global) is left as it is
    Object.defineProperty(globalThis, name, { value: found.value, writable: false, configurable: false, enumerable: found.enumerable });
  }
}
