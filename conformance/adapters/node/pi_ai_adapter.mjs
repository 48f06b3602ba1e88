#!/usr/bin/env node
// pi-conformance adapter for the published upstream library @earendil-works/pi-ai 1.x
// (profile pi-ai-1, spec/pi-ai-1/spec.md).
//
//   node pi_ai_adapter.mjs <PACKAGE_DIR>
//
// PACKAGE_DIR is the installed package (node_modules/@earendil-works/pi-ai). The program
// imports its public entry point (dist/index.js), speaks the JSON-lines protocol of
// spec/protocol.md on stdin/stdout and states `profile: "pi-ai-1"` in its handshake. The
// waiting, consuming and serializing machinery is the same as pi_course_adapter.mjs, so the
// two profiles observe streams in exactly the same way.
//
// No dependencies beyond the package under test: Node.js 20 built-ins only.

import { readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { settleOrIdle } from "./settling.mjs";

const PROTOCOL = 1;
const PROFILE = "pi-ai-1";
const DEFAULT_SETTLE_DEADLINE_S = 0.25;
// Event-loop turns a settle step yields; each turn also drains every queued microtask.
const SETTLE_TICKS = 20;
const OPERATIONS = [
  "content_text",
  "system_message_text",
  "render_system_message_update",
  "current_system_message",
  "current_system_prompt",
  "current_tools",
  "normalize_context",
  "faux_block",
  "faux_message",
  "event_stream",
  "faux_provider",
];
const SCENARIOS = new Set(["event_stream", "faux_provider"]);
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
function threwFrom(action) {
  try {
    action();
    return null;
  } catch (error) {
    return describe(error);
  }
}
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
  onEvent = null; // called with the count of events received so far (faux_provider's abort_after)
  task = null; // the iteration's promise, once started
  done = false;
  failed = false;
  error = undefined;

  /** Start iterating (once) and yield until the consumer waits for its next event. */
  async start(stream) {
    if (this.task !== null) return;
    const iterate = async () => {
      for await (const event of stream) {
        this.received.push(event);
        if (this.onEvent) this.onEvent(this.received.length);
      }
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
// the package
// ---------------------------------------------------------------------------------------

const EXPORTS = {
  content_text: "contentText",
  system_message_text: "getSystemMessageText",
  render_system_message_update: "renderSystemMessageUpdate",
  current_system_message: "getCurrentSystemMessage",
  current_system_prompt: "getCurrentSystemPrompt",
  current_tools: "getCurrentTools",
  normalize_context: "normalizeContext",
};

class Package {
  constructor(directory) {
    this.directory = path.resolve(directory);
    this.info = JSON.parse(readFileSync(path.join(this.directory, "package.json"), "utf8"));
    this.loading = null;
  }

  /** The package's public entry point (its "." export), imported once. */
  async load() {
    if (this.loading === null) {
      const entry = this.info.exports?.["."]?.import ?? this.info.main ?? "./dist/index.js";
      this.loading = import(pathToFileURL(path.join(this.directory, entry)).href);
    }
    return this.loading;
  }

  async find(name) {
    let namespace;
    try {
      namespace = await this.load();
    } catch (error) {
      throw new NotImplemented(`${this.info.name} failed to import: ${describe(error)}`);
    }
    if (typeof namespace[name] !== "function") throw new NotImplemented(`${this.info.name} exports no ${name}`);
    return namespace[name];
  }
}

/** Call a package function; a throw fails the case with the message. */
function callApi(name, fn, args) {
  try {
    return fn(...args);
  } catch (error) {
    throw new Threw(`${name}() threw ${describe(error)}`);
  }
}

/** Call a function on private copies of its arguments; report whether the first one changed. */
function pure(name, fn, args) {
  const copies = args.map((argument) => structuredClone(argument));
  const before = fingerprint(copies[0]);
  const value = toJson(callApi(name, fn, copies), `the value ${name}() returned`);
  return { value, input_unchanged: fingerprint(copies[0]) === before };
}

// ---------------------------------------------------------------------------------------
// pure operations
// ---------------------------------------------------------------------------------------

const PURE = {
  async content_text(pkg, input) {
    const args = "separator" in input ? [input.content, input.separator] : [input.content];
    return pure("contentText", await pkg.find("contentText"), args);
  },
  async system_message_text(pkg, input) {
    return pure("getSystemMessageText", await pkg.find("getSystemMessageText"), [input.message]);
  },
  async render_system_message_update(pkg, input) {
    return pure("renderSystemMessageUpdate", await pkg.find("renderSystemMessageUpdate"), [input.message]);
  },
  async current_system_message(pkg, input) {
    const { value, input_unchanged } = pure("getCurrentSystemMessage", await pkg.find("getCurrentSystemMessage"), [input.messages]);
    const sections = isObject(value) ? value.sections : undefined;
    return { value, section_order: isObject(sections) ? Object.keys(sections) : null, input_unchanged };
  },
  async current_system_prompt(pkg, input) {
    return pure("getCurrentSystemPrompt", await pkg.find("getCurrentSystemPrompt"), [input.messages]);
  },
  async current_tools(pkg, input) {
    return pure("getCurrentTools", await pkg.find("getCurrentTools"), [input.messages]);
  },
  async normalize_context(pkg, input) {
    return pure("normalizeContext", await pkg.find("normalizeContext"), [input.context]);
  },
  async faux_block(pkg, input) {
    let value;
    if (input.kind === "text") value = callApi("fauxText", await pkg.find("fauxText"), [input.text]);
    else if (input.kind === "thinking") value = callApi("fauxThinking", await pkg.find("fauxThinking"), [input.thinking]);
    else if (input.kind === "toolCall") {
      const args = [input.name, structuredClone(input.arguments)];
      if ("id" in input) args.push({ id: input.id });
      value = callApi("fauxToolCall", await pkg.find("fauxToolCall"), args);
    } else throw new ProtocolError(`unknown faux_block kind ${JSON.stringify(input.kind)}`);
    return { value: toJson(value, "the block") };
  },
  async faux_message(pkg, input) {
    const args = [structuredClone(input.content)];
    if ("options" in input) args.push(structuredClone(input.options));
    return { value: toJson(callApi("fauxAssistantMessage", await pkg.find("fauxAssistantMessage"), args), "fauxAssistantMessage()") };
  },
};

// ---------------------------------------------------------------------------------------
// event_stream scenarios
// ---------------------------------------------------------------------------------------

const ASSISTANT_TERMINAL_FIELDS = new Map([
  ["done", "message"],
  ["error", "error"],
]);

async function playEventStream(pkg, input, steps, deadlineS) {
  let stream;
  let terminalField; // event -> the field that carries its result, or null if not terminal
  if (input.kind === "assistant") {
    const AssistantMessageEventStream = await pkg.find("AssistantMessageEventStream");
    stream = new AssistantMessageEventStream();
    terminalField = (event) => ASSISTANT_TERMINAL_FIELDS.get(event.type) ?? null;
  } else if (input.kind === "generic") {
    const EventStream = await pkg.find("EventStream");
    const terminalTypes = [...input.terminal_types];
    const resultField = String(input.result_field);
    stream = new EventStream(
      (event) => terminalTypes.includes(event.type),
      (event) => event[resultField],
    );
    terminalField = (event) => (terminalTypes.includes(event.type) ? resultField : null);
  } else {
    throw new ProtocolError(`unknown event_stream kind ${JSON.stringify(input.kind)}`);
  }

  let terminalPayload = NO_OBJECT; // what the first terminal event pushed carries
  let endArgument = NO_OBJECT;
  const consumer = new Consumer();
  const observations = [];
  for (const step of steps) {
    let observation = {};
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
      default:
        throw new ProtocolError(`unknown event_stream action ${JSON.stringify(step.action)}`);
    }
    observations.push(observation);
  }
  return { steps: observations };
}

// ---------------------------------------------------------------------------------------
// faux_provider scenarios
// ---------------------------------------------------------------------------------------

const SIGNAL_MODES = new Set(["none", "aborted", "controller"]);
const CALL_ACTIONS = new Set(["abort", "start_consumer", "consume", "result"]);

/**
 * The faux provider's response steps from the case's JSON: `{message}` is the message itself,
 * `{factory}` a function step that records the context it is called with and returns the
 * message, `{factory_throws}` a function step that throws an Error with that message.
 */
function responseSteps(responses, recorder) {
  if (!Array.isArray(responses)) throw new ProtocolError("responses must be an array");
  return responses.map((response) => {
    if (!isObject(response)) throw new ProtocolError(`a response is an object, not ${safeString(response)}`);
    if ("message" in response) return { step: structuredClone(response.message), script: response.message };
    if ("factory" in response) {
      const message = structuredClone(response.factory);
      return {
        step: (context, _options, state) => {
          recorder.push({ context: toJson(context, "the context"), call_count: state.callCount });
          return message;
        },
        script: response.factory,
      };
    }
    if ("factory_throws" in response) {
      const text = String(response.factory_throws);
      return {
        step: (context, _options, state) => {
          recorder.push({ context: toJson(context, "the context"), call_count: state.callCount });
          throw new Error(text);
        },
        script: null,
      };
    }
    throw new ProtocolError(`unknown response form ${JSON.stringify(Object.keys(response))}`);
  });
}

async function playFauxProvider(pkg, input, steps, deadlineS) {
  const fauxProvider = await pkg.find("fauxProvider");
  const faux = callApi("fauxProvider", fauxProvider, "options" in input ? [structuredClone(input.options)] : []);
  const recorder = []; // what factory steps were called with
  let script = []; // mirror of the pending responses: the scripted message each call plays
  let given = []; // the step objects handed over, to tell whether playing changed them
  let givenBefore = "";
  const setResponses = (responses, append) => {
    const made = responseSteps(responses, recorder);
    const objects = made.map((entry) => entry.step);
    if (append) {
      faux.appendResponses(objects);
      script.push(...made.map((entry) => entry.script));
      given.push(...objects);
    } else {
      faux.setResponses(objects);
      script = made.map((entry) => entry.script);
      given = objects;
    }
    givenBefore = fingerprint(given);
  };
  setResponses(input.responses ?? [], false);
  const calls = new Map(); // call name -> {controller, stream, consumer, script}
  const observations = [];
  for (const step of steps) {
    let observation = {};
    const action = step.action;
    let call = calls.get(String(step.call));
    if (action !== "stream" && CALL_ACTIONS.has(action) && call === undefined) {
      throw new ProtocolError(`step uses call ${JSON.stringify(step.call)} before any stream step created it`);
    }
    switch (action) {
      case "stream": {
        const model = "model" in step ? faux.getModel(String(step.model)) : faux.getModel();
        if (model === undefined) throw new ProtocolError(`the faux provider has no model ${JSON.stringify(step.model)}`);
        call = { controller: null, stream: null, consumer: new Consumer(), script: script.length > 0 ? script.shift() : null };
        calls.set(String(step.call), call);
        observation.threw = callStream(faux, model, call, step);
        break;
      }
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
        observation = await callStep(action, call, step, deadlineS);
        break;
      case "requests":
        observation.requests = toJson(recorder, "the recorded requests");
        break;
      case "state":
        observation = {
          call_count: faux.state.callCount,
          pending_responses: faux.getPendingResponseCount(),
        };
        break;
      case "set_responses":
        setResponses(step.responses, false);
        break;
      case "append_responses":
        setResponses(step.responses, true);
        break;
      case "check_turns":
        observation.turns_unchanged = fingerprint(given) === givenBefore;
        break;
      default:
        throw new ProtocolError(`unknown faux_provider action ${JSON.stringify(action)}`);
    }
    observations.push(observation);
  }
  return { steps: observations };
}

/** Call the provider's stream() as the step asks; the step's `threw` observation. */
function callStream(faux, model, call, step) {
  const signalMode = step.signal ?? "none";
  if (!SIGNAL_MODES.has(signalMode)) throw new ProtocolError(`unknown signal mode ${JSON.stringify(signalMode)}`);
  const options = {};
  if (signalMode !== "none") {
    call.controller = new AbortController();
    if (signalMode === "aborted") call.controller.abort();
    options.signal = call.controller.signal;
  }
  if ("session_id" in step) options.sessionId = String(step.session_id);
  try {
    const context = structuredClone(step.context);
    call.stream = Object.keys(options).length === 0 ? faux.provider.stream(model, context) : faux.provider.stream(model, context, options);
    return null;
  } catch (error) {
    return describe(error);
  }
}

async function callStep(action, call, step, deadlineS) {
  if (call.stream === null || call.stream === undefined) return { threw: "there is no stream: stream() threw" };
  if (action === "start_consumer") {
    await call.consumer.start(call.stream);
    return {};
  }
  if (action === "consume") {
    const abortAfter = step.abort_after;
    if (abortAfter !== undefined) {
      if (call.controller === null) throw new ProtocolError("abort_after needs a call with signal: controller");
      call.consumer.onEvent = (count) => {
        if (count === abortAfter) call.controller.abort();
      };
    }
    const observation = await call.consumer.finish(call.stream, deadlineS);
    if (abortAfter !== undefined) observation.abort_summary = abortSummary(call);
    return observation;
  }
  // result: "terminal_event" is the terminal event this call's consumer received.
  const terminal = [...call.consumer.received].reverse().find((event) => isObject(event) && ASSISTANT_TERMINAL_FIELDS.has(event.type));
  const payload = terminal === undefined ? NO_OBJECT : terminal[ASSISTANT_TERMINAL_FIELDS.get(terminal.type)];
  return observeResult(call.stream, [["terminal_event", payload]], deadlineS);
}

/**
 * What is stable about a stream aborted mid-way (spec/pi-ai-1/spec.md, PA-FAUX-ABORT-3): the
 * terminal event's shape, and that every kept block is a prefix of the scripted block.
 */
function abortSummary(call) {
  const events = call.consumer.received;
  const last = events.at(-1);
  const message = isObject(last) ? (last.type === "error" ? last.error : last.message) : undefined;
  const scripted = isObject(call.script) && Array.isArray(call.script.content) ? call.script.content : [];
  const content = isObject(message) && Array.isArray(message.content) ? message.content : [];
  const isPrefix = (kept, full) => typeof kept === "string" && typeof full === "string" && full.startsWith(kept);
  const contentIsPrefix =
    content.length <= scripted.length &&
    content.every((block, index) => {
      const full = scripted[index];
      if (!isObject(block) || !isObject(full) || block.type !== full.type) return false;
      if (block.type === "text") return isPrefix(block.text, full.text);
      if (block.type === "thinking") return isPrefix(block.thinking, full.thinking);
      return block.type === "toolCall" && block.id === full.id && block.name === full.name;
    });
  return {
    type: isObject(last) ? (last.type ?? null) : null,
    reason: isObject(last) ? (last.reason ?? null) : null,
    stop_reason: isObject(message) ? (message.stopReason ?? null) : null,
    error_message: isObject(message) ? (message.errorMessage ?? null) : null,
    content_is_prefix: contentIsPrefix,
    start_first: isObject(events[0]) && events[0].type === "start",
    one_terminal: events.filter((event) => isObject(event) && ASSISTANT_TERMINAL_FIELDS.has(event.type)).length === 1,
  };
}

// ---------------------------------------------------------------------------------------
// the protocol server
// ---------------------------------------------------------------------------------------

function usage() {
  process.stderr.write("usage: node pi_ai_adapter.mjs <PACKAGE_DIR>\n");
  process.exit(2);
}

class Server {
  constructor(packageDir) {
    this.pkg = new Package(packageDir);
    this.settleDeadlineS = DEFAULT_SETTLE_DEADLINE_S;
  }

  hello(request) {
    if (typeof request.settle_deadline_s === "number" && request.settle_deadline_s > 0) {
      this.settleDeadlineS = request.settle_deadline_s;
    }
    const implementation = { name: String(this.pkg.info.name || "pi-ai"), language: "javascript" };
    if (typeof this.pkg.info.version === "string") implementation.version = this.pkg.info.version;
    return { ok: true, protocol: PROTOCOL, profile: PROFILE, implementation, operations: OPERATIONS };
  }

  async operation(request) {
    if (!isObject(request.input)) throw new ProtocolError(`${request.op} needs an input object`);
    if (!SCENARIOS.has(request.op)) return { ok: true, observation: await PURE[request.op](this.pkg, request.input) };
    if (!Array.isArray(request.steps)) throw new ProtocolError(`${request.op} needs a steps array`);
    const play = request.op === "event_stream" ? playEventStream : playFauxProvider;
    return { ok: true, observation: await play(this.pkg, request.input, request.steps, this.settleDeadlineS) };
  }

  async guardedOperation(request) {
    strays = new StrayErrors();
    try {
      const response = await this.operation(request);
      await tick();
      return response;
    } catch (error) {
      if (error instanceof NotImplemented) return errorResponse("not_implemented", error.message);
      if (error instanceof Threw) return errorResponse("threw", error.message);
      if (error instanceof ProtocolError) return errorResponse("protocol", error.message);
      log(`internal error: ${error?.stack ?? describe(error)}`);
      return errorResponse("protocol", `the adapter failed: ${describe(error)}`);
    }
  }

  async handle(line) {
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
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
      respond({ seq, ...errorResponse("protocol", `unknown op ${JSON.stringify(request.op)} (profile ${PROFILE})`) });
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
  const [packageDir, ...extra] = process.argv.slice(2);
  if (!packageDir || extra.length > 0) usage();
  const server = new Server(packageDir);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
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
    queue.then(() => process.exit(0));
  });
}

main();
