// Chapter 06's operations for the course adapter: object_schema (lab 6.1), tool_registry
// (lab 6.2) and execute_tool_call (lab 6.3), played against the student's compiled `tool`
// module. They observe exactly as the in-process Python binding does
// (conformance/adapters/tool_binding.py), so the same fixtures judge both.
//
// The tools are the adapter's own scripted tools (never student code): plain objects with
// name, description, schema and an async execute that records what it received and plays
// the case's script (report progress, return, throw).
//
// `toolOperations(find)` takes the adapter's lookup of a named export (pi_course_adapter.mjs's
// Modules.find, which says precisely which module or lab is missing) and returns the handlers.
//
// No dependencies: Node.js 20 built-ins only.

import { NotImplemented, ProtocolError, Threw, describe, isNotImplemented, safeString } from "./failures.mjs";
import { fingerprint, isObject, toJson, track, waitFor } from "./observation.mjs";

/** The fixtures' validator names, as the course exports them. */
const VALIDATORS = { string: "stringValue", optional_string: "optionalString", optional_positive_integer: "optionalPositiveInteger" };

/** What the course's code calls an error's message: its text, without the type (tool_binding.error_message). */
export function errorMessage(error) {
  if (error instanceof Error || (isObject(error) && "message" in error)) return String(error.message);
  return safeString(error);
}

/**
 * `[value, null]`, or `[null, message]` when `run()` threw. A placeholder's throw ("not
 * implemented", the course's starters' "尚未实现") skips the case, as chapters 03/04's do.
 */
export function attempt(what, run) {
  try {
    return [run(), null];
  } catch (error) {
    if (isNotImplemented(error)) throw new NotImplemented(`${what} is not implemented: ${describe(error)}`);
    return [null, errorMessage(error)];
  }
}

/** A method of an implementation object, or a skip naming what it lacks (tool_binding's _method). */
function method(target, owner, name) {
  let found;
  try {
    found = target === null || target === undefined ? undefined : target[name];
  } catch (error) {
    throw new Threw(`reading ${owner}.${name} threw ${describe(error)}`); // a getter of the student's
  }
  if (typeof found !== "function") throw new NotImplemented(`${owner} has no ${name}`);
  return (...args) => found.apply(target, args);
}

/**
 * A parse result as `{value, keys}`: the value without the keys that hold nothing, and its
 * keys in order (null for a non-object). JSON cannot show a key without a value, so a missing
 * optional key (`{label: undefined}`) shows in `keys` only; a key that is absent shows in neither.
 * Like the Python binding, a key holding null counts as holding nothing.
 */
export function parsedView(raw, what) {
  const value = toJson(raw, what);
  if (!isObject(value) || !isObject(raw)) return { value, keys: null };
  const kept = Object.fromEntries(Object.entries(value).filter(([, item]) => item !== null));
  return { value: kept, keys: Object.keys(raw) };
}

/** `same` for the very object, `absent` for none, `other` for another one. */
function identity(given, expected) {
  if (given === undefined || given === null) return "absent";
  return expected !== undefined && expected !== null && given === expected ? "same" : "other";
}

// ---------------------------------------------------------------------------------------
// schemas and scripted tools
// ---------------------------------------------------------------------------------------

class ToolKit {
  constructor(find) {
    this.find = find;
  }

  /** objectSchema(shape) over the student's own validators; a throw fails the case. */
  async objectSchema(shape) {
    const validators = {};
    for (const [key, name] of Object.entries(shape)) {
      const exported = VALIDATORS[String(name)];
      if (exported === undefined) throw new ProtocolError(`unknown validator ${JSON.stringify(name)}`);
      validators[key] = await this.find(exported);
    }
    const objectSchema = await this.find("objectSchema");
    const [schema, error] = attempt("objectSchema", () => objectSchema(validators));
    if (error !== null) throw new Threw(`object_schema() threw ${error}`);
    return schema;
  }

  /** The schema a case names: objectSchema of a shape, or an opaque one (parse returns its input, no jsonSchema). */
  schema(spec) {
    return isObject(spec) && "shape" in spec ? this.objectSchema(spec.shape) : Promise.resolve({ parse: (value) => value });
  }

  /** A scripted tool of `spec` that records into `run`. */
  async tool(spec, run) {
    const schema = await this.schema(spec.schema);
    const script = Array.isArray(spec.script) ? spec.script : [];
    const name = String(spec.name);
    return {
      name,
      description: String(spec.description),
      schema,
      async execute(params, context) {
        return playScript(name, script, run, params, context);
      },
    };
  }
}

/** Record what one scripted tool received, then play its script; without a `return` the output is `{content: []}`. */
function playScript(name, script, run, params, context) {
  const { value, keys } = parsedView(params, "the parameters the tool received");
  const field = (key) => (context === null || context === undefined ? undefined : context[key]);
  const callId = field("callId");
  const progress = field("reportProgress");
  run.received.push({
    tool: name,
    params: value,
    param_keys: keys,
    call_id: typeof callId === "string" || callId === undefined || callId === null ? (callId ?? null) : safeString(callId),
    signal: identity(field("signal"), run.signal),
    report_progress: identity(progress, run.reportProgress),
  });
  for (const action of script) {
    if ("progress" in action) {
      if (typeof progress === "function") progress(structuredClone(action.progress));
    } else if ("throw" in action) {
      throw new Error(action.throw);
    } else {
      return structuredClone(action.return);
    }
  }
  return { content: [] };
}

/** What a case's scripted tools share: what they received, and the identities they compare with. */
function newRun() {
  return { received: [], signal: undefined, reportProgress: undefined };
}

// ---------------------------------------------------------------------------------------
// object_schema (lab 6.1)
// ---------------------------------------------------------------------------------------

async function objectSchemaOp(kit, input) {
  const schema = await kit.objectSchema(input.shape);
  const jsonSchema = schema === null || schema === undefined ? undefined : schema.jsonSchema;
  const observation = { json_schema: toJson(jsonSchema, "jsonSchema"), value: null, keys: null, error: null };
  let unchanged = true;
  if ("value" in input) {
    const value = structuredClone(input.value);
    const before = fingerprint(value);
    const parse = method(schema, "the schema", "parse");
    const [parsed, error] = attempt("parse", () => parse(value));
    if (error === null) Object.assign(observation, parsedView(parsed, "the value parse() returned"));
    observation.error = error;
    unchanged = fingerprint(value) === before;
  }
  observation.input_unchanged = unchanged;
  return observation;
}

// ---------------------------------------------------------------------------------------
// tool_registry (lab 6.2)
// ---------------------------------------------------------------------------------------

function labelled(tools, label) {
  if (!Object.hasOwn(tools, String(label))) {
    throw new ProtocolError(`no tool labelled ${JSON.stringify(label)} in the case's tools (known: ${Object.keys(tools).join(", ")})`);
  }
  return tools[String(label)];
}

/** The label of the very tool object `found`, `other` for an object the case did not give, null for none. */
function labelOf(tools, found) {
  if (found === undefined || found === null) return null;
  return Object.keys(tools).find((label) => tools[label] === found) ?? "other";
}

function asArray(value, what) {
  if (value === null || typeof value !== "object" || typeof value[Symbol.iterator] !== "function") {
    throw new Threw(`${what} did not return an array (got ${safeString(value)})`);
  }
  return Array.from(value);
}

async function toolRegistryOp(kit, input, steps) {
  const ToolRegistry = await kit.find("ToolRegistry");
  const run = newRun();
  const tools = {};
  for (const [label, spec] of Object.entries(input.tools)) tools[label] = await kit.tool(spec, run);
  const state = { registry: null };
  const observed = [];
  for (const step of steps) observed.push(registryStep(ToolRegistry, step, tools, state));
  return { steps: observed };
}

function registryStep(ToolRegistry, step, tools, state) {
  const action = step.action;
  if (action === "construct") {
    const args = "tools" in step ? [step.tools.map((label) => labelled(tools, label))] : [];
    const [created, error] = attempt("ToolRegistry", () => new ToolRegistry(...args));
    state.registry = error === null ? created : null;
    return { error };
  }
  const registry = state.registry;
  if (registry === null) throw new Threw("there is no registry: construct it first (new ToolRegistry() threw or no construct step ran)");
  if (action === "register") {
    const register = method(registry, "ToolRegistry", "register");
    return { error: attempt("register", () => register(labelled(tools, step.tool)))[1] };
  }
  if (action === "get") {
    const get = method(registry, "ToolRegistry", "get");
    const [found, error] = attempt("get", () => get(step.name));
    if (error !== null) throw new Threw(`ToolRegistry.get() threw ${error}`);
    return { tool: labelOf(tools, found) };
  }
  if (action === "list") return listStep(registry, tools);
  if (action === "definitions") {
    const definitions = method(registry, "ToolRegistry", "definitions");
    const [value, error] = attempt("definitions", () => definitions());
    if (error !== null) throw new Threw(`ToolRegistry.definitions() threw ${error}`);
    return { value: toJson(asArray(value, "definitions()"), "definitions()") };
  }
  throw new ProtocolError(`unknown tool_registry action ${JSON.stringify(action)}`);
}

/** list() twice: the labels of the first answer, and whether the two are different arrays. */
function listStep(registry, tools) {
  const list = method(registry, "ToolRegistry", "list");
  const [first, error] = attempt("list", () => list());
  const [second, again] = attempt("list", () => list());
  if (error !== null || again !== null) throw new Threw(`ToolRegistry.list() threw ${error ?? again}`);
  return { tools: asArray(first, "list()").map((tool) => labelOf(tools, tool)), fresh_array: first !== second };
}

// ---------------------------------------------------------------------------------------
// execute_tool_call (lab 6.3)
// ---------------------------------------------------------------------------------------

/** The caller's context: an AbortController's signal and/or a progress function that records. */
function toolContext(spec, run, progress) {
  const context = {};
  if (spec.signal) run.signal = context.signal = new AbortController().signal;
  if (spec.report_progress) {
    run.reportProgress = context.reportProgress = (content) => {
      progress.push(toJson(content, "the progress a tool reported"));
    };
  }
  return context;
}

async function executeToolCallOp(kit, input, deadlineS) {
  const [ToolRegistry, executeToolCall] = [await kit.find("ToolRegistry"), await kit.find("executeToolCall")];
  const run = newRun();
  const [registry, error] = attempt("ToolRegistry", () => new ToolRegistry());
  if (error !== null) throw new Threw(`new ToolRegistry() threw ${error}`);
  const register = method(registry, "ToolRegistry", "register");
  for (const spec of input.tools) {
    const tool = await kit.tool(spec, run);
    if (attempt("register", () => register(tool))[1] !== null) throw new Threw(`register(${tool.name}) threw`);
  }
  const progress = [];
  const args = [structuredClone(input.call), registry];
  if ("context" in input) args.push(toolContext(input.context, run, progress));
  const [result, failure] = await settled(executeToolCall, args, deadlineS);
  const value = failure !== null ? null : toJson(result, "the result executeToolCall() resolved with");
  rejectPlaceholderResult(value);
  return { result: value, error: failure, received: run.received, progress };
}

/** Await what executeToolCall returns within the settle deadline: `[value, null]` or `[null, message]`. */
async function settled(executeToolCall, args, deadlineS) {
  const [returned, error] = attempt("executeToolCall", () => executeToolCall(...args));
  if (error !== null) return [null, `execute_tool_call() threw synchronously: ${error}`];
  const [outcome, tracked] = track(Promise.resolve(returned));
  await waitFor(tracked, deadlineS);
  if (outcome.state === "pending") return [null, "executeToolCall() never settled"];
  if (outcome.state === "rejected") {
    // The course's starter is an async function: its placeholder throw arrives as a rejection.
    if (isNotImplemented(outcome.error)) throw new NotImplemented(`executeToolCall is not implemented: ${describe(outcome.error)}`);
    return [null, errorMessage(outcome.error)];
  }
  return [outcome.value, null];
}

/**
 * executeToolCall turns every throw into a failure result, a lab 6.1 placeholder's too (the
 * student's validators run inside it): such a result says an earlier lab is unfinished, so
 * the case is skipped, as a placeholder anywhere else skips it.
 */
function rejectPlaceholderResult(value) {
  const said = isObject(value) && isObject(value.details) ? value.details.error : undefined;
  if (typeof said === "string" && isNotImplemented(said)) {
    throw new NotImplemented(`executeToolCall reported a placeholder's error (an earlier lab is unfinished): ${JSON.stringify(said)}`);
  }
}

// ---------------------------------------------------------------------------------------
// the handlers
// ---------------------------------------------------------------------------------------

/** Chapter 06's operations and scenario over the exports `find(name)` resolves. */
export function toolOperations(find) {
  const kit = (modules) => new ToolKit((name) => find(modules, name));
  return {
    operations: {
      object_schema: (modules, input) => objectSchemaOp(kit(modules), input),
      execute_tool_call: (modules, input, deadlineS) => executeToolCallOp(kit(modules), input, deadlineS),
    },
    scenarios: {
      tool_registry: (modules, input, steps) => toolRegistryOp(kit(modules), input, steps),
    },
  };
}
