#!/usr/bin/env node
// pi-conformance adapter for the course's compiled TypeScript (plain ES modules).
//
//   node pi_course_adapter.mjs <MODULES_DIR>
//
// MODULES_DIR holds the student's compiled `types.js`, `event-stream.js`,
// `scripted-model.js`, `provider-adapter.js`, `tool.js`, `agent-loop.js` and `agent.js` (the course builds packages/pi-course/src/*.ts into
// packages/pi-course/dist/src/*.js). The program speaks the JSON-lines protocol of
// spec/protocol.md on stdin/stdout and observes exactly as the in-process Python adapter
// (conformance/adapters/binding.py) does, so the same fixtures judge both. The protocol server
// (protocol.mjs), the failures (failures.mjs) and the observing machinery (observation.mjs)
// are shared with pi_ai_adapter.mjs; chapter 05's operations are provider_ops.mjs's, chapter
// 06's tool_ops.mjs's, chapter 07's loop_ops.mjs's, chapter 09's reducer (lab 9.1, the
// student's agent.js) agent_state_ops.mjs's, its Agent (labs 9.2-9.5) agent_ops.mjs's.
//
// No dependencies: Node.js 20 built-ins only.

import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
// protocol.mjs first: it loads channel.mjs, which captures the built-ins the channel relies on.
import { importWatched, serve } from "./protocol.mjs";
import { isolate } from "./lab_isolation.mjs";
import { LoadFailed, NotImplemented, ProtocolError, Threw, describe, isNotImplemented, safeString } from "./failures.mjs";
import {
  ASSISTANT_TERMINAL_FIELDS,
  fingerprint,
  isObject,
  playCallSteps,
  playStreamSteps,
  toJson,
  track,
  waitFor,
} from "./observation.mjs";
import { providerOperations } from "./provider_ops.mjs";
import { toolOperations } from "./tool_ops.mjs";
import { loopOperations } from "./loop_ops.mjs";
import { agentStateOperations } from "./agent_state_ops.mjs";
import { agentOperations, offersAgent } from "./agent_ops.mjs";

// ---------------------------------------------------------------------------------------
// the student's modules
// ---------------------------------------------------------------------------------------

const MODULE_FILES = ["types.js", "event-stream.js", "scripted-model.js", "provider-adapter.js", "tool.js", "agent-loop.js", "agent.js"];

// Where each export lives in the course, and the lab that introduces it: used to order
// the search and to say precisely what is missing.
const EXPORTS = {
  textOf: ["types.js", "3.1"],
  systemMessageText: ["types.js", "3.1"],
  currentSystemMessage: ["types.js", "3.1"],
  currentSystemPrompt: ["types.js", "3.1"],
  text: ["types.js", "3.1"],
  userMessage: ["types.js", "3.1"],
  assistantMessage: ["types.js", "3.1"],
  EventStream: ["event-stream.js", "3.2"],
  AssistantMessageEventStream: ["event-stream.js", "3.2"],
  ScriptedModel: ["scripted-model.js", "4.1"],
  toProviderMessages: ["provider-adapter.js", "5.1"],
  toProviderTools: ["provider-adapter.js", "5.1"],
  createOpenAICompatibleModel: ["provider-adapter.js", "5.2"],
  fixedTransport: ["provider-adapter.js", "5.2"],
  createOpenAICompatibleTransport: ["provider-adapter.js", "5.3"],
  stringValue: ["tool.js", "6.1"],
  optionalString: ["tool.js", "6.1"],
  optionalPositiveInteger: ["tool.js", "6.1"],
  objectSchema: ["tool.js", "6.1"],
  ToolRegistry: ["tool.js", "6.2"],
  executeToolCall: ["tool.js", "6.3"],
  runAgentLoop: ["agent-loop.js", "7.1"],
  reduceAgentState: ["agent.js", "9.1"],
  Agent: ["agent.js", "9.2"],
};

class Modules {
  constructor(directory, isolation = null) {
    this.directory = path.resolve(directory);
    this.isolation = isolation; // lab_isolation.mjs: imports under an operation's context, or null
    this.packageInfo = findPackageJson(this.directory);
    this.loaded = new Map(); // file name -> Promise<{namespace} | {missing} | {error}>
  }

  /** How a module file is named in messages: relative to the package, as the course says it. */
  display(file) {
    const full = path.join(this.directory, file);
    return this.packageInfo ? path.relative(this.packageInfo.root, full) : full;
  }

  /** Import a module once (in an operation's isolation context, if any), lazily; a missing file or a failed import is remembered too. */
  load(file, context = null) {
    const isolated = context !== null && this.isolation !== null;
    const key = isolated ? `${context}:${file}` : file;
    if (!this.loaded.has(key)) {
      const full = path.join(this.directory, file);
      const url = isolated ? this.isolation.url(context, file) : pathToFileURL(full).href;
      const loading = existsSync(full)
        ? importWatched(this.display(file), url).then(
            (namespace) => ({ namespace }),
            (error) => (error instanceof LoadFailed ? { failed: error } : { error }),
          )
        : Promise.resolve({ missing: true });
      this.loaded.set(key, loading);
    }
    return this.loaded.get(key);
  }

  /** The named export, searched in its home module first, then in the two others. */
  async find(name, context = null) {
    const [home, lab] = EXPORTS[name];
    const order = [home, ...MODULE_FILES.filter((file) => file !== home)];
    const outcomes = new Map();
    for (const file of order) {
      const outcome = await this.load(file, context);
      if (outcome.failed) throw outcome.failed; // loading it would end this process as it ended the last
      outcomes.set(file, outcome);
      if (outcome.namespace && typeof outcome.namespace[name] === "function") return outcome.namespace[name];
    }
    const homeOutcome = outcomes.get(home);
    if (homeOutcome.missing) throw new NotImplemented(`${this.display(home)} not found (${name}, lab ${lab})`);
    if (homeOutcome.error) {
      throw new NotImplemented(`${this.display(home)} failed to import (${name}, lab ${lab}): ${describe(homeOutcome.error)}`);
    }
    throw new NotImplemented(`export ${name} missing from ${MODULE_FILES.join("/")} (lab ${lab})`);
  }
}

/** The nearest package.json at or above `directory`: the implementation's name and version. */
function findPackageJson(directory) {
  for (let current = directory; ; current = path.dirname(current)) {
    const candidate = path.join(current, "package.json");
    try {
      if (statSync(candidate).isFile()) {
        const data = JSON.parse(readFileSync(candidate, "utf8"));
        return { root: current, name: data.name, version: data.version };
      }
    } catch {
      // unreadable or not JSON: keep looking further up
    }
    if (path.dirname(current) === current) return null;
  }
}

// ---------------------------------------------------------------------------------------
// calling student code
// ---------------------------------------------------------------------------------------

/** Call an API function; "not implemented" skips the case, anything else fails it. */
function callApi(name, fn, args) {
  try {
    return fn(...args);
  } catch (error) {
    if (isNotImplemented(error)) throw new NotImplemented(`${name} is not implemented: ${describe(error)}`);
    throw new Threw(`${name}() threw ${describe(error)}`);
  }
}

function construct(name, Class, args) {
  try {
    return new Class(...args);
  } catch (error) {
    if (isNotImplemented(error)) throw new NotImplemented(`${name} is not implemented: ${describe(error)}`);
    throw new Threw(`new ${name}() threw ${describe(error)}`);
  }
}

// Lab 3.1 asks for a temporary AssistantMessageEventStream whose terminal test never
// accepts anything and whose extractor throws "not implemented in lab 3.1". Such a stream
// never throws where the adapter could see it (it just never ends), so its own source
// text is the only way to tell "not started yet" (skipped) from "broken" (failed).
const PLACEHOLDER_THROW = /throw\s+new\s+\w*Error\s*\(\s*(["'`])([^"'`]*not implemented[^"'`]*)\1/i;

function rejectPlaceholder(name, Class) {
  const match = PLACEHOLDER_THROW.exec(Function.prototype.toString.call(Class));
  if (match) throw new NotImplemented(`${name} is still a placeholder: it throws ${JSON.stringify(match[2])}`);
}

// ---------------------------------------------------------------------------------------
// pure operations (lab 3.1)
// ---------------------------------------------------------------------------------------

/** Call a one-argument function on a private copy of the input; report whether it changed. */
function pure(name, fn, argument) {
  const copy = structuredClone(argument);
  const before = fingerprint(copy);
  const value = toJson(callApi(name, fn, [copy]), `the value ${name}() returned`);
  return { value, input_unchanged: fingerprint(copy) === before };
}

const PURE = {
  async text_of(modules, input) {
    return pure("textOf", await modules.find("textOf"), input.message);
  },
  async system_message_text(modules, input) {
    return pure("systemMessageText", await modules.find("systemMessageText"), input.message);
  },
  async current_system_message(modules, input) {
    const { value, input_unchanged } = pure("currentSystemMessage", await modules.find("currentSystemMessage"), input.messages);
    const sections = isObject(value) ? value.sections : undefined;
    return { value, section_order: isObject(sections) ? Object.keys(sections) : null, input_unchanged };
  },
  async current_system_prompt(modules, input) {
    return pure("currentSystemPrompt", await modules.find("currentSystemPrompt"), input.messages);
  },
  async make_text(modules, input) {
    return { value: toJson(callApi("text", await modules.find("text"), [input.value]), "text()") };
  },
  async make_user_message(modules, input) {
    return { value: toJson(callApi("userMessage", await modules.find("userMessage"), [input.value]), "userMessage()") };
  },
  async make_assistant_message(modules, input) {
    const fn = await modules.find("assistantMessage");
    const args = [structuredClone(input.content)];
    // Pass exactly what the case gives: a stop reason only when the case names one (or
    // overrides follow it; undefined then means "none given"), overrides only when given.
    if ("stop_reason" in input || "overrides" in input) args.push(input.stop_reason);
    if ("overrides" in input) args.push(structuredClone(input.overrides));
    return { value: toJson(callApi("assistantMessage", fn, args), "assistantMessage()") };
  },
};

// ---------------------------------------------------------------------------------------
// event_stream scenarios (lab 3.2)
// ---------------------------------------------------------------------------------------

async function playEventStream(modules, input, steps, deadlineS) {
  let stream;
  let terminalField; // event -> the field that carries its result, or null if not terminal
  if (input.kind === "assistant") {
    const AssistantMessageEventStream = await modules.find("AssistantMessageEventStream");
    rejectPlaceholder("AssistantMessageEventStream", AssistantMessageEventStream);
    stream = construct("AssistantMessageEventStream", AssistantMessageEventStream, []);
    terminalField = (event) => ASSISTANT_TERMINAL_FIELDS.get(event.type) ?? null;
  } else if (input.kind === "generic") {
    const EventStream = await modules.find("EventStream");
    const terminalTypes = [...input.terminal_types];
    const resultField = String(input.result_field);
    stream = construct("EventStream", EventStream, [
      (event) => terminalTypes.includes(event.type),
      (event) => event[resultField],
    ]);
    terminalField = (event) => (terminalTypes.includes(event.type) ? resultField : null);
  } else {
    throw new ProtocolError(`unknown event_stream kind ${JSON.stringify(input.kind)}`);
  }

  // `next` (a hand-driven iterator) is the course's own: lab 3.2 asks for its semantics.
  let iterator = null;
  const next = () => {
    try {
      iterator ??= stream[Symbol.asyncIterator]();
    } catch (error) {
      return { state: "rejected", error: `next() threw ${describe(error)}` };
    }
    return observeNext(iterator, deadlineS);
  };
  return playStreamSteps(stream, terminalField, steps, deadlineS, { next });
}

// ---------------------------------------------------------------------------------------
// scripted_model scenarios (labs 4.1, 4.2)
// ---------------------------------------------------------------------------------------

const CALL_ACTIONS = new Set(["mutate_context", "abort", "start_consumer", "consume", "result", "mutate_result", "context"]);

async function playScriptedModel(modules, input, steps, deadlineS) {
  const ScriptedModel = await modules.find("ScriptedModel", "scripted_model"); // over the reference's lab 3 modules
  const turns = structuredClone(input.turns);
  const turnsBefore = fingerprint(turns);
  const model = construct("ScriptedModel", ScriptedModel, [turns]);
  const player = {
    name: "scripted_model",
    callActions: CALL_ACTIONS,
    open: (step) => ({ context: structuredClone(step.context) }),
    stream: (call, _step, signal) => callStream(model, call, signal),
    actions: {
      mutate_context: (step, call) => mutate(call.context, step),
      mutate_result: (step, call) => mutateResult(call, step, deadlineS),
      context: (_step, call) => ({ context: toJson(call.context, "the caller's context") }),
      requests: () => ({ requests: recordedRequests(model) }),
      check_turns: () => ({ turns_unchanged: fingerprint(turns) === turnsBefore }),
    },
  };
  return playCallSteps(player, steps, deadlineS);
}

/** Call model.stream() with the step's signal (null: none); the step's `threw` observation. */
function callStream(model, call, signal) {
  try {
    // The options object is passed only when a signal is used, as a caller would.
    call.stream = signal === null ? model.stream(call.context) : model.stream(call.context, { signal });
    return null;
  } catch (error) {
    if (isNotImplemented(error)) throw new NotImplemented(`ScriptedModel.stream is not implemented: ${describe(error)}`);
    return describe(error);
  }
}

/** One hand-driven `iterator.next()`: {state, done?, value?, error?} within the deadline. */
async function observeNext(iterator, deadlineS) {
  let promise;
  try {
    promise = Promise.resolve(iterator.next());
  } catch (error) {
    return { state: "rejected", error: `next() threw ${describe(error)}` };
  }
  const [outcome, tracked] = track(promise);
  await waitFor(tracked, deadlineS);
  if (outcome.state === "pending") return { state: "pending" };
  if (outcome.state === "rejected") return { state: "rejected", error: describe(outcome.error) };
  const step = outcome.value;
  if (!isObject(step) || typeof step.done !== "boolean") {
    throw new Threw(`next() resolved with ${safeString(toJson(step, "next()'s value"))}, not {value, done}`);
  }
  return { state: "resolved", done: step.done, value: toJson(step.value, "the event next() gave") };
}

/** Wait for the call's result, then change it in place as the step says (mutate_result). */
async function mutateResult(call, step, deadlineS) {
  if (call.stream === null || call.stream === undefined) return { applied: false, error: "there is no stream: stream() threw" };
  let promise;
  try {
    promise = Promise.resolve(call.stream.result());
  } catch (error) {
    return { applied: false, error: `result() threw ${describe(error)}` };
  }
  const [outcome, tracked] = track(promise);
  await waitFor(tracked, deadlineS);
  if (outcome.state === "pending") return { applied: false, error: "result() is still pending" };
  if (outcome.state === "rejected") return { applied: false, error: `result() rejected: ${describe(outcome.error)}` };
  const change = "append" in step ? step.append : step.set;
  try {
    applyChange(outcome.value, step);
  } catch (error) {
    return { applied: false, error: `the result has no ${change.path}: ${error.message}` };
  }
  return { applied: true };
}

function recordedRequests(model) {
  const requests = model.requests;
  if (requests === null || typeof requests !== "object" || typeof requests[Symbol.iterator] !== "function") {
    throw new Threw(`model.requests is not a list (got ${safeString(requests)})`);
  }
  return toJson(Array.from(requests), "model.requests");
}

// ---------------------------------------------------------------------------------------
// mutate_context: just enough JSON Pointer (RFC 6901)
// ---------------------------------------------------------------------------------------

function pointerParts(pointer) {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new Error(`JSON pointer ${JSON.stringify(pointer)} must start with '/'`);
  return pointer
    .slice(1)
    .split("/")
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function pointerStep(container, part) {
  const key = Array.isArray(container) ? Number.parseInt(part, 10) : part;
  if (container === null || typeof container !== "object" || !(key in container)) throw new Error(`no ${JSON.stringify(part)}`);
  return container[key];
}

/** Apply the step's `append` or `set` to the very context object given to stream(). */
function mutate(context, step) {
  try {
    applyChange(context, step);
  } catch (error) {
    throw new ProtocolError(`mutate_context cannot apply ${JSON.stringify(step)}: ${error.message}`);
  }
}

/** Apply a step's `append` or `set` ({path, value}) to `target` in place; throws if it cannot. */
function applyChange(target, step) {
  const change = "append" in step ? step.append : step.set;
  const parts = pointerParts(String(change.path));
  const value = structuredClone(change.value);
  if ("append" in step) {
    const array = parts.reduce(pointerStep, target);
    if (!Array.isArray(array)) throw new Error(`${change.path} is not an array`);
    array.push(value);
    return;
  }
  if (parts.length === 0) throw new Error("cannot replace the whole document");
  const parent = parts.slice(0, -1).reduce(pointerStep, target);
  const last = parts.at(-1);
  if (parent === null || typeof parent !== "object") throw new Error(`cannot set ${JSON.stringify(last)}`);
  parent[Array.isArray(parent) ? Number.parseInt(last, 10) : last] = value;
}

// Chapter 05 (labs 5.1-5.3): played by provider_ops.mjs, the module in its isolation context
// (isolation.json's provider_adapter: its imports of lab 3 modules get the reference).
const PROVIDER = providerOperations((modules, name) => modules.find(name, "provider_adapter"));
// Chapter 06 (labs 6.1-6.3): played by tool_ops.mjs over the same lookup of exports.
const TOOL = toolOperations((modules, name) => modules.find(name));
// Chapter 07 (labs 7.1-7.5): loop_ops.mjs, the student's loop imported in its isolation context.
const LOOP = loopOperations((modules, name, context) => modules.find(name, context));
// Chapter 09's reducer (lab 9.1): agent_state_ops.mjs, agent.js imported in its isolation context.
const AGENT_STATE = agentStateOperations((modules, name) => modules.find(name, "reduce_agent_state"));
// Chapter 09's Agent (labs 9.2-9.5): agent_ops.mjs, agent.js imported in its isolation context.
const AGENT = agentOperations((modules, name, context) => modules.find(name, context));

// ---------------------------------------------------------------------------------------
// the protocol server
// ---------------------------------------------------------------------------------------

serve({
  name: "pi_course_adapter",
  argument: "MODULES_DIR",
  profile: "course",
  isolate, // before lockdown and any student module: see lab_isolation.mjs
  open: (modulesDir, isolation) => new Modules(modulesDir, isolation),
  // One module at a time, so that a death while loading is charged to the module it happened in.
  preload: async (modules) => {
    for (const file of MODULE_FILES) await modules.load(file);
    for (const [operation, entry] of Object.entries(modules.isolation?.table ?? {})) await modules.load(entry.module, operation);
  },
  implementation(modules) {
    const info = modules.packageInfo;
    const implementation = { name: typeof info?.name === "string" && info.name ? info.name : "pi-course", language: "javascript" };
    if (typeof info?.version === "string") implementation.version = info.version;
    return implementation;
  },
  operations: { ...PURE, ...PROVIDER.operations, ...TOOL.operations, ...LOOP.operations, ...AGENT_STATE.operations, ...AGENT.operations },
  offers: (modules, operation) => operation !== "run_agent" || offersAgent(modules.directory),
  scenarios: { event_stream: playEventStream, scripted_model: playScriptedModel, ...PROVIDER.scenarios, ...TOOL.scenarios },
});
