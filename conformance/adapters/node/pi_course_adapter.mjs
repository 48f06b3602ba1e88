#!/usr/bin/env node
// pi-conformance adapter for the course's compiled TypeScript (plain ES modules).
//
//   node pi_course_adapter.mjs <MODULES_DIR>
//
// MODULES_DIR holds the student's compiled `types.js`, `event-stream.js` and
// `scripted-model.js` (the course builds packages/pi-course/src/*.ts into
// packages/pi-course/dist/src/*.js). The program speaks the JSON-lines protocol of
// spec/protocol.md on stdin/stdout and observes exactly as the in-process Python adapter
// (conformance/adapters/binding.py) does, so the same fixtures judge both.
//
// No dependencies: Node.js 20 built-ins only.

import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { settleOrIdle } from "./settling.mjs";

const PROTOCOL = 1;
const DEFAULT_SETTLE_DEADLINE_S = 0.25;
// Event-loop turns a settle step yields; each turn also drains every queued microtask.
const SETTLE_TICKS = 20;
const OPERATIONS = [
  "text_of",
  "system_message_text",
  "current_system_message",
  "current_system_prompt",
  "make_text",
  "make_user_message",
  "make_assistant_message",
  "event_stream",
  "scripted_model",
];
const SCENARIOS = new Set(["event_stream", "scripted_model"]);
const NO_OBJECT = Symbol("no object"); // an identity candidate that nothing can equal

// ---------------------------------------------------------------------------------------
// stdout belongs to the protocol
// ---------------------------------------------------------------------------------------

// Student code may console.log at import time or while playing a turn; one stray line on
// stdout would break the protocol, so everything except our responses goes to stderr.
const writeResponseLine = process.stdout.write.bind(process.stdout);
process.stdout.write = (...args) => process.stderr.write(...args);

function respond(message) {
  writeResponseLine(JSON.stringify(message) + "\n");
}

function log(text) {
  process.stderr.write(`[pi_course_adapter] ${text}\n`);
}

// ---------------------------------------------------------------------------------------
// failures: each maps onto one kind of error response
// ---------------------------------------------------------------------------------------

/** The implementation lacks what the operation needs: the case is skipped. */
class NotImplemented extends Error {}
/** The implementation threw (or returned a non-JSON value) where a value is expected. */
class Threw extends Error {}
/** The request cannot be played (bad request, unknown action): the case errors. */
class ProtocolError extends Error {}

/** `Name: message` of anything student code threw (binding.py's describe_exception). */
function describe(error) {
  if (error instanceof Error || (error !== null && typeof error === "object" && "message" in error)) {
    const name = error.name || error.constructor?.name || "Error";
    return `${name}: ${error.message}`;
  }
  return `non-Error value thrown: ${safeString(error)}`;
}

function safeString(value) {
  try {
    return typeof value === "string" ? JSON.stringify(value) : String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** The course's placeholders throw "not implemented in lab 3.1" and the like. */
function isNotImplemented(error) {
  const message = error !== null && typeof error === "object" ? error.message : error;
  return typeof message === "string" && /not implemented/i.test(message);
}

// ---------------------------------------------------------------------------------------
// JSON views of values the implementation produced
// ---------------------------------------------------------------------------------------

/** A detached JSON copy of an implementation value; `undefined` is written as null. */
function toJson(value, what) {
  let text;
  try {
    // NaN and Infinity have no JSON form (Python's allow_nan=False refuses them too).
    text = JSON.stringify(value, (_key, item) => {
      if (typeof item === "number" && !Number.isFinite(item)) throw new TypeError(`${item} is not a JSON number`);
      return item;
    });
  } catch (error) {
    throw new Threw(`${what} is not a JSON value: ${describe(error)}`);
  }
  return text === undefined ? null : JSON.parse(text);
}

let unfingerprintable = 0;

/**
 * A strict, order-sensitive text form of a value, to tell whether it changed. Unlike plain
 * JSON it also shows keys set to undefined and functions, so adding one counts as a change.
 */
function fingerprint(value) {
  try {
    return JSON.stringify(value, (_key, item) => {
      if (item === undefined) return "\u0000undefined";
      if (typeof item === "function") return `\u0000function ${item.name}`;
      if (typeof item === "number" && !Number.isFinite(item)) return `\u0000${item}`;
      if (typeof item === "bigint") return `\u0000${item}n`;
      return item;
    });
  } catch {
    // A value that cannot be written (a cycle) never equals an earlier fingerprint.
    unfingerprintable += 1;
    return `\u0000unwritable ${unfingerprintable}`;
  }
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------
// the student's modules
// ---------------------------------------------------------------------------------------

const MODULE_FILES = ["types.js", "event-stream.js", "scripted-model.js"];

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
};

class Modules {
  constructor(directory) {
    this.directory = path.resolve(directory);
    this.packageInfo = findPackageJson(this.directory);
    this.loaded = new Map(); // file name -> Promise<{namespace} | {missing} | {error}>
  }

  /** How a module file is named in messages: relative to the package, as the course says it. */
  display(file) {
    const full = path.join(this.directory, file);
    return this.packageInfo ? path.relative(this.packageInfo.root, full) : full;
  }

  /** Import a module once, lazily; a missing file or a failed import is remembered too. */
  load(file) {
    if (!this.loaded.has(file)) {
      const full = path.join(this.directory, file);
      const loading = existsSync(full)
        ? import(pathToFileURL(full).href).then(
            (namespace) => ({ namespace }),
            (error) => ({ error }),
          )
        : Promise.resolve({ missing: true });
      this.loaded.set(file, loading);
    }
    return this.loaded.get(file);
  }

  /** The named export, searched in its home module first, then in the two others. */
  async find(name) {
    const [home, lab] = EXPORTS[name];
    const order = [home, ...MODULE_FILES.filter((file) => file !== home)];
    const outcomes = new Map();
    for (const file of order) {
      const outcome = await this.load(file);
      outcomes.set(file, outcome);
      if (outcome.namespace && typeof outcome.namespace[name] === "function") return outcome.namespace[name];
    }
    const homeOutcome = outcomes.get(home);
    if (homeOutcome.missing) throw new NotImplemented(`${this.display(home)} not found (${name}, lab ${lab})`);
    if (homeOutcome.error) {
      throw new NotImplemented(`${this.display(home)} failed to import (${name}, lab ${lab}): ${describe(homeOutcome.error)}`);
    }
    throw new NotImplemented(`export ${name} missing from ${MODULE_FILES.join("/")}`);
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

/** null, or what `action` threw: a scenario step observes throws instead of failing. */
function threwFrom(action) {
  try {
    action();
    return null;
  } catch (error) {
    return describe(error);
  }
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
// errors thrown outside any call we made (deferred student code)
// ---------------------------------------------------------------------------------------

// A producer that throws inside queueMicrotask, or a promise nobody awaits, must not kill
// the server: such errors are logged. One that says "not implemented" (lab 4.1 lets the
// deferred producer throw "not implemented in lab 4.1" for aborts, exhaustion and error
// turns) makes the whole request not_implemented, and stops it at its next waiting step
// rather than letting never-ending streams use up the case's timeout.

/** The stray errors seen while one operation runs. */
class StrayErrors {
  placeholder = undefined; // the first stray error that says "not implemented"
  #wake;
  /** Resolves when a placeholder error arrives: waiting steps stop waiting then. */
  seen = new Promise((resolve) => {
    this.#wake = resolve;
  });

  note(error) {
    if (this.placeholder === undefined && isNotImplemented(error)) {
      this.placeholder = error;
      this.#wake();
    }
  }

  throwIfPlaceholder() {
    if (this.placeholder !== undefined) throw new NotImplemented(`deferred work (a microtask or an unawaited promise) threw ${describe(this.placeholder)}`);
  }
}

let strays = new StrayErrors(); // replaced by a fresh one for every operation

function onStrayError(kind) {
  return (error) => {
    log(`${kind} from the implementation: ${error instanceof Error && error.stack ? error.stack : describe(error)}`);
    strays.note(error);
  };
}

process.on("uncaughtException", onStrayError("uncaught exception"));
process.on("unhandledRejection", onStrayError("unhandled rejection"));

// ---------------------------------------------------------------------------------------
// waiting: the only places where a scenario yields to the event loop
// ---------------------------------------------------------------------------------------

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Let deferred work run: queued microtasks, woken consumers, their continuations. */
async function settle() {
  for (let i = 0; i < SETTLE_TICKS; i += 1) await tick();
  strays.throwIfPlaceholder();
}

/**
 * Wait until `promise` settles, the event loop is idle, or `seconds` pass; true when it
 * settled (settling.mjs). A placeholder error from deferred work ends the wait early.
 */
function waitFor(promise, seconds) {
  return settleOrIdle(promise, seconds, strays.seen).finally(() => strays.throwIfPlaceholder());
}

/** One `for await` consumer of a stream and what it received so far. */
class Consumer {
  received = [];
  task = null; // the iteration's promise, once started
  done = false;
  failed = false;
  error = undefined;

  /** Start iterating (once) and yield until the consumer waits for its next event. */
  async start(stream) {
    if (this.task !== null) return;
    const iterate = async () => {
      for await (const event of stream) this.received.push(event);
    };
    this.task = iterate().then(
      () => {
        this.done = true;
      },
      (error) => {
        this.done = true;
        this.failed = true;
        this.error = error;
      },
    );
    await settle();
  }

  /**
   * Wait (at most the settle deadline) for the iteration to finish, then serialize what the
   * consumer saw. Serializing only now shows a partial that later events kept changing.
   */
  async finish(stream, deadlineS) {
    await this.start(stream);
    await waitFor(this.task, deadlineS);
    const observation = { events: toJson(this.received, "the events"), finished: this.done };
    if (this.failed) {
      observation.finished = false;
      observation.threw = `iteration threw ${describe(this.error)}`;
    }
    return observation;
  }
}

/**
 * Observe `stream.result()` within the settle deadline. `identities` lists, in order, the
 * objects the resolved value may be (`===`, checked before anything is serialized).
 */
async function observeResult(stream, identities, deadlineS) {
  let promise;
  try {
    promise = Promise.resolve(stream.result());
  } catch (error) {
    return { state: "rejected", error: `result() threw ${describe(error)}`, same_object_as: null };
  }
  const outcome = { state: "pending" };
  const tracked = promise.then(
    (value) => Object.assign(outcome, { state: "resolved", value }),
    (error) => Object.assign(outcome, { state: "rejected", error }),
  );
  await waitFor(tracked, deadlineS);
  if (outcome.state === "pending") return { state: "pending", same_object_as: null };
  if (outcome.state === "rejected") return { state: "rejected", error: describe(outcome.error), same_object_as: null };
  const same = identities.find(([, candidate]) => candidate === outcome.value);
  return { state: "resolved", value: toJson(outcome.value, "the result"), same_object_as: same ? same[0] : null };
}

// ---------------------------------------------------------------------------------------
// event_stream scenarios (lab 3.2)
// ---------------------------------------------------------------------------------------

const ASSISTANT_TERMINAL_FIELDS = new Map([
  ["done", "message"],
  ["error", "error"],
]);

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

  let terminalPayload = NO_OBJECT; // what the first terminal event pushed carries
  let endArgument = NO_OBJECT;
  const consumer = new Consumer();
  let iterator = null; // the hand-driven iterator, once a `next` step created it
  const observations = [];
  for (const step of steps) {
    let observation = {};
    // push and end run synchronously, with no await in between: only the waiting steps
    // below yield to the event loop (spec/fixture-format.md, "Scenario operations").
    switch (step.action) {
      case "push": {
        const event = structuredClone(step.event);
        if (terminalPayload === NO_OBJECT && isObject(event)) {
          const field = terminalField(event);
          if (field !== null) terminalPayload = event[field];
        }
        observation.threw = threwFrom(() => stream.push(event));
        break;
      }
      case "end":
        if ("result" in step) {
          const argument = structuredClone(step.result);
          endArgument = argument;
          observation.threw = threwFrom(() => stream.end(argument));
        } else {
          observation.threw = threwFrom(() => stream.end());
        }
        break;
      case "start_consumer":
        await consumer.start(stream);
        break;
      case "consume":
        observation = await consumer.finish(stream, deadlineS);
        break;
      case "result":
        observation = await observeResult(
          stream,
          [
            ["terminal_event", terminalPayload],
            ["end_argument", endArgument],
          ],
          deadlineS,
        );
        break;
      case "next":
        try {
          iterator ??= stream[Symbol.asyncIterator]();
        } catch (error) {
          observation = { state: "rejected", error: `next() threw ${describe(error)}` };
          break;
        }
        observation = await observeNext(iterator, deadlineS);
        break;
      default:
        throw new ProtocolError(`unknown event_stream action ${JSON.stringify(step.action)}`);
    }
    observations.push(observation);
  }
  return { steps: observations };
}

// ---------------------------------------------------------------------------------------
// scripted_model scenarios (labs 4.1, 4.2)
// ---------------------------------------------------------------------------------------

const SIGNAL_MODES = new Set(["none", "aborted", "controller"]);
const CALL_ACTIONS = new Set(["mutate_context", "abort", "start_consumer", "consume", "result", "mutate_result", "context"]);

async function playScriptedModel(modules, input, steps, deadlineS) {
  const ScriptedModel = await modules.find("ScriptedModel");
  const turns = structuredClone(input.turns);
  const turnsBefore = fingerprint(turns);
  const model = construct("ScriptedModel", ScriptedModel, [turns]);
  const calls = new Map(); // call name -> {context, controller, stream, consumer}
  const observations = [];
  for (const step of steps) {
    let observation = {};
    const action = step.action;
    let call = calls.get(String(step.call));
    if (action !== "stream" && CALL_ACTIONS.has(action) && call === undefined) {
      throw new ProtocolError(`step uses call ${JSON.stringify(step.call)} before any stream step created it`);
    }
    switch (action) {
      case "stream":
        call = { context: structuredClone(step.context), controller: null, stream: null, consumer: new Consumer() };
        calls.set(String(step.call), call);
        observation.threw = callStream(model, call, step.signal ?? "none");
        break;
      case "mutate_context":
        mutate(call.context, step);
        break;
      case "abort":
        if (call.controller === null) {
          throw new ProtocolError(`call ${JSON.stringify(step.call)} has no abort controller (use signal: controller)`);
        }
        call.controller.abort();
        break;
      case "settle":
        await settle();
        break;
      case "start_consumer":
      case "consume":
      case "result":
        observation = await callStep(action, call, deadlineS);
        break;
      case "mutate_result":
        observation = await mutateResult(call, step, deadlineS);
        break;
      case "context":
        observation.context = toJson(call.context, "the caller's context");
        break;
      case "requests":
        observation.requests = recordedRequests(model);
        break;
      case "check_turns":
        observation.turns_unchanged = fingerprint(turns) === turnsBefore;
        break;
      default:
        throw new ProtocolError(`unknown scripted_model action ${JSON.stringify(action)}`);
    }
    observations.push(observation);
  }
  return { steps: observations };
}

/** Call model.stream() as the step asks; the step's `threw` observation. */
function callStream(model, call, signalMode) {
  if (!SIGNAL_MODES.has(signalMode)) throw new ProtocolError(`unknown signal mode ${JSON.stringify(signalMode)}`);
  if (signalMode !== "none") {
    call.controller = new AbortController();
    if (signalMode === "aborted") call.controller.abort();
  }
  try {
    // The options object is passed only when a signal is used, as a caller would.
    call.stream = call.controller === null ? model.stream(call.context) : model.stream(call.context, { signal: call.controller.signal });
    return null;
  } catch (error) {
    if (isNotImplemented(error)) throw new NotImplemented(`ScriptedModel.stream is not implemented: ${describe(error)}`);
    return describe(error);
  }
}

async function callStep(action, call, deadlineS) {
  if (call.stream === null || call.stream === undefined) return { threw: "there is no stream: stream() threw" };
  if (action === "start_consumer") {
    await call.consumer.start(call.stream);
    return {};
  }
  if (action === "consume") return call.consumer.finish(call.stream, deadlineS);
  // result: "terminal_event" is the terminal event this call's consumer received.
  const terminal = [...call.consumer.received].reverse().find((event) => isObject(event) && ASSISTANT_TERMINAL_FIELDS.has(event.type));
  const payload = terminal === undefined ? NO_OBJECT : terminal[ASSISTANT_TERMINAL_FIELDS.get(terminal.type)];
  return observeResult(call.stream, [["terminal_event", payload]], deadlineS);
}

/** One hand-driven `iterator.next()`: {state, done?, value?, error?} within the deadline. */
async function observeNext(iterator, deadlineS) {
  let promise;
  try {
    promise = Promise.resolve(iterator.next());
  } catch (error) {
    return { state: "rejected", error: `next() threw ${describe(error)}` };
  }
  const outcome = { state: "pending" };
  const tracked = promise.then(
    (value) => Object.assign(outcome, { state: "resolved", value }),
    (error) => Object.assign(outcome, { state: "rejected", error }),
  );
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
  const outcome = { state: "pending" };
  const tracked = promise.then(
    (value) => Object.assign(outcome, { state: "resolved", value }),
    (error) => Object.assign(outcome, { state: "rejected", error }),
  );
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

// ---------------------------------------------------------------------------------------
// the protocol server
// ---------------------------------------------------------------------------------------

function usage() {
  process.stderr.write("usage: node pi_course_adapter.mjs <MODULES_DIR>\n");
  process.exit(2);
}

class Server {
  constructor(modulesDir) {
    this.modules = new Modules(modulesDir);
    this.settleDeadlineS = DEFAULT_SETTLE_DEADLINE_S;
  }

  hello(request) {
    if (typeof request.settle_deadline_s === "number" && request.settle_deadline_s > 0) {
      this.settleDeadlineS = request.settle_deadline_s;
    }
    const info = this.modules.packageInfo;
    const implementation = { name: typeof info?.name === "string" && info.name ? info.name : "pi-course", language: "javascript" };
    if (typeof info?.version === "string") implementation.version = info.version;
    return { ok: true, protocol: PROTOCOL, profile: "course", implementation, operations: OPERATIONS };
  }

  async operation(request) {
    if (!isObject(request.input)) throw new ProtocolError(`${request.op} needs an input object`);
    if (!SCENARIOS.has(request.op)) return { ok: true, observation: await PURE[request.op](this.modules, request.input) };
    if (!Array.isArray(request.steps)) throw new ProtocolError(`${request.op} needs a steps array`);
    const play = request.op === "event_stream" ? playEventStream : playScriptedModel;
    return { ok: true, observation: await play(this.modules, request.input, request.steps, this.settleDeadlineS) };
  }

  /** Run one operation; its failures (and stray "not implemented" throws) become errors. */
  async guardedOperation(request) {
    strays = new StrayErrors();
    try {
      const response = await this.operation(request);
      await tick(); // let a rejection left unhandled by the last step be reported now
      strays.throwIfPlaceholder();
      return response;
    } catch (error) {
      if (error instanceof NotImplemented) return errorResponse("not_implemented", error.message);
      if (error instanceof Threw) return errorResponse("threw", error.message);
      if (error instanceof ProtocolError) return errorResponse("protocol", error.message);
      log(`internal error: ${error?.stack ?? describe(error)}`);
      return errorResponse("protocol", `the adapter failed: ${describe(error)}`);
    }
  }

  /** Answer one request line; never throws. Returns false once the server should stop. */
  async handle(line) {
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
      // Answer with the request's own seq if one can be read, so the runner can match it.
      const seq = Number(/"seq"\s*:\s*(\d+)/.exec(line)?.[1] ?? 0);
      respond({ seq, ...errorResponse("protocol", `not JSON: ${describe(error)}`) });
      return true;
    }
    const seq = Number.isInteger(request?.seq) && request.seq >= 0 ? request.seq : 0;
    if (!isObject(request) || typeof request.op !== "string") {
      respond({ seq, ...errorResponse("protocol", "a request is an object with seq and op") });
      return true;
    }
    if (request.op === "hello") {
      respond({ seq, ...this.hello(request) });
      return true;
    }
    if (request.op === "stop") {
      respond({ seq, ok: true });
      return false;
    }
    if (!OPERATIONS.includes(request.op)) {
      respond({ seq, ...errorResponse("protocol", `unknown op ${JSON.stringify(request.op)}`) });
      return true;
    }
    respond({ seq, ...(await this.guardedOperation(request)) });
    return true;
  }
}

function errorResponse(kind, message) {
  return { ok: false, error: { kind, message } };
}

function main() {
  const [modulesDir, ...extra] = process.argv.slice(2);
  if (!modulesDir || extra.length > 0) usage();
  const server = new Server(modulesDir);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  // One request at a time, in order, even if the runner writes ahead.
  let queue = Promise.resolve();
  let stopping = false;
  lines.on("line", (line) => {
    if (stopping || line.trim() === "") return;
    queue = queue.then(async () => {
      if (stopping) return;
      if (!(await server.handle(line))) {
        stopping = true;
        lines.close();
      }
    });
  });
  lines.on("close", () => {
    // Student code may leave timers or handles behind: exit explicitly once answered.
    queue.then(() => process.exit(0));
  });
}

main();
